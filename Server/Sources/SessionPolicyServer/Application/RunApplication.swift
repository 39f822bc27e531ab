public import Hummingbird
public import Logging
import NIOConcurrencyHelpers
import ServiceLifecycle
public import UnixSignals

/// Runs `application` until one of `signals` stops it gracefully (the server stops accepting,
/// requests in flight finish, the store closes), and logs why it stops: `stopping` (notice)
/// with `reason` the signal, then `stopped` (notice) with the same reason; or `stopped` (error)
/// with `reason=error` and the error when the server fails, which is then thrown.
///
/// What `policyctl-serve` runs after ``buildApplication(configuration:logger:clock:handleSignals:onServerRunning:)``.
public func runApplication(
    _ application: some ApplicationProtocol, logger: Logger, signals: [UnixSignal] = [.sigterm, .sigint]
) async throws {
    let group = ServiceGroup(configuration: .init(services: [application], logger: logger))
    let trapped = await UnixSignalsSequence(trapping: signals)
    let reason = NIOLockedValueBox<String?>(nil)
    do {
        try await withThrowingTaskGroup(of: Void.self) { tasks in
            tasks.addTask {
                for await signal in trapped {
                    reason.withLockedValue { $0 = "\(signal)" }
                    logger.notice("stopping", metadata: ["reason": "\(signal)"])
                    await group.triggerGracefulShutdown()
                    return
                }
            }
            try await group.run()
            tasks.cancelAll()
        }
    } catch {
        logger.error("stopped", metadata: ["reason": "error", "error": "\(error)"])
        throw error
    }
    logger.notice("stopped", metadata: ["reason": "\(reason.withLockedValue { $0 } ?? "the server finished")"])
}
