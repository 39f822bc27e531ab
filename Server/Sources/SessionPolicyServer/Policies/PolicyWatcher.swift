import Logging
import ServiceLifecycle
import UnixSignals

/// Reloads the policy directory on SIGHUP and when its files change (checked every
/// `interval`), and runs `onHangUp` on SIGHUP. A reload never stops a good policy from serving.
struct PolicyWatcher: Service {
    let registry: PolicyRegistry
    let interval: Duration
    let metrics: ServerMetrics
    let logger: Logger
    let onSignal: Bool
    /// Also run on SIGHUP (the decision log file is reopened, the token key files read again).
    var onHangUp: @Sendable () async -> Void = {}

    func run() async throws {
        await cancelWhenGracefulShutdown {
            await withDiscardingTaskGroup { group in
                if onSignal {
                    group.addTask {
                        for await _ in await UnixSignalsSequence(trapping: .sighup) {
                            logger.info("SIGHUP: reloading policies, reopening the decision log, reading the token key files")
                            reload()
                            await onHangUp()
                        }
                    }
                }
                group.addTask {
                    while !Task.isCancelled {
                        try? await Task.sleep(for: interval)
                        if !Task.isCancelled, registry.directoryChanged() { reload() }
                    }
                }
            }
        }
    }

    func reload() {
        let ok = registry.reload(logger: logger)
        let s = registry.snapshot
        metrics.reloaded(ok: ok, serving: s.policies.mapValues(\.digest), broken: s.filesWithProblems)
    }
}
