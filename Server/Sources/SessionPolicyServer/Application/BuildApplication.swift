public import Foundation
public import Hummingbird
import HummingbirdCore
public import Logging
import NIOCore
import ServiceLifecycle
public import SessionPolicy
import SessionPolicyDelivery

/// Builds the server: loads the policies, opens and prepares the store, and wires the routes.
///
/// - Parameters:
///   - configuration: what to serve, where, with which keys.
///   - logger: where the server logs (libraries never make their own).
///   - clock: the server's clock (tokens' and tickets' lifetimes); injectable for tests.
///   - handleSignals: reload on SIGHUP (off for servers started inside tests).
///   - onServerRunning: called with the bound port once the server listens.
///   - onAdminRunning: called with the admin listener's bound port once it listens (`admin.port`).
/// - Throws: ``ConfigurationError`` for a bad configuration, ``StoreError`` if the store
///   cannot be opened or prepared.
public func buildApplication(
    configuration: ServerConfiguration,
    logger: Logger,
    clock: @escaping @Sendable () -> Timestamp = { Timestamp(millisecondsSinceEpoch: Int64(Date().timeIntervalSince1970 * 1000)) },
    handleSignals: Bool = true,
    onServerRunning: @escaping @Sendable (Int) async -> Void = { _ in },
    onAdminRunning: @escaping @Sendable (Int) async -> Void = { _ in }
) async throws -> some ApplicationProtocol {
    let metrics = ServerMetrics()
    let policies = try loadPolicies(configuration, metrics: metrics, logger: logger)
    let (verifier, serviceVerifier) = try await makeVerifiers(configuration, metrics: metrics, logger: logger)
    let store = try configuration.storage.makeStore(
        logger: logger, timeout: configuration.storeTimeout, connectTimeout: configuration.storeConnectTimeout,
        poolMax: configuration.storePoolMax)
    store.observe(metrics)
    let server = Server(
        configuration: configuration, policies: policies, store: store, verifier: verifier, serviceVerifier: serviceVerifier,
        metrics: metrics,
        detectPerClient: RateLimiter(perMinute: configuration.detectPerClient.perMinute, burst: configuration.detectPerClient.burst),
        detectPerDevice: RateLimiter(perMinute: configuration.detectPerDevice.perMinute, burst: configuration.detectPerDevice.burst),
        machines: try configuration.signingKeyPEM.map { pem in
            SignedMachines(
                signers: .init(
                    current: try MachineSigner(privateKeyPEM: pem),
                    previous: try configuration.signingPreviousKeyPEM.map { try MachineSigner(privateKeyPEM: $0) }),
                validity: configuration.machineValidity, store: store)
        },
        decisionStream: try configuration.decisionLogStream.map {
            try DecisionStream($0, hashUsers: configuration.decisionLogHashUsers)
        },
        clock: clock)

    var services: [any Service] = [
        PolicyWatcher(
            registry: policies, interval: configuration.reloadInterval, metrics: metrics, logger: logger, onSignal: handleSignals,
            onHangUp: {
                server.decisionStream?.reopen(logger: logger)
                await TokenKeyFiles.reload(configuration, verifier: verifier, serviceVerifier: serviceVerifier, logger: logger)
                if let machines = server.machines { SigningKeyFiles.reload(configuration, machines: machines, logger: logger) }
            }),
        StoreJanitor(store: store, clock: clock, decisionLogRetention: configuration.decisionLogRetention, logger: logger),
    ]
    if let service = store as? any Service { services.insert(service, at: 0) }
    for source in verifier.keySets { services.append(KeySetRefresher(source: source)) }
    var tracer: (any SpanStarter)?
    if let endpoint = configuration.tracingEndpoint {
        let backend = try ServerTracing.backend(endpoint: endpoint, exportDelay: configuration.tracingExportDelay, logger: logger)
        tracer = backend.tracer
        services.append(backend.service)
    }
    let separateAdmin = configuration.adminPort != nil
    if let adminPort = configuration.adminPort {
        services.append(
            Application(
                router: makeRouter(server, routes: Server.routes.filter { Server.adminPaths.contains($0.path) }, tracer: nil),
                configuration: .init(
                    address: .hostname(configuration.adminHost ?? configuration.host, port: adminPort), serverName: "sessionpolicy"),
                onServerRunning: { channel in
                    let port = channel.localAddress?.port ?? adminPort
                    logger.info("admin serving", metadata: ["address": "\(configuration.adminHost ?? configuration.host):\(port)"])
                    await onAdminRunning(port)
                },
                logger: logger))
    }
    var limits = SlowClientLimits(
        requestTimeout: configuration.httpRequestTimeout, idleTimeout: configuration.httpIdleTimeout,
        maxConnections: configuration.httpMaxConnections)
    limits.fitOpenFileLimit(logger: logger)
    var app = Application(
        router: makeRouter(
            server, routes: Server.routes.filter { !separateAdmin || !Server.adminPaths.contains($0.path) }, tracer: tracer),
        server: limits.server(),
        configuration: .init(
            address: .hostname(configuration.host, port: configuration.port), serverName: "sessionpolicy",
            availableConnectionsDelegate: MaximumAvailableConnections(limits.maxConnections, logger: logger)),
        services: services,
        onServerRunning: { channel in
            let port = channel.localAddress?.port ?? configuration.port
            logger.info(
                "serving", metadata: ["address": "\(configuration.host):\(port)", "storage": "\(configuration.storage)"])
            await onServerRunning(port)
        },
        logger: logger)
    app.beforeServerStarts { try await prepareStore(store, configuration, now: clock(), logger: logger) }
    return app
}

/// Loads the policy directory; at least one policy must compile.
private func loadPolicies(_ configuration: ServerConfiguration, metrics: ServerMetrics, logger: Logger) throws -> PolicyRegistry {
    let policies = PolicyRegistry(directory: configuration.policyDirectory)
    policies.reload(logger: logger)
    let loaded = policies.snapshot
    metrics.reloaded(ok: loaded.problems.isEmpty, serving: loaded.policies.mapValues(\.digest), broken: loaded.filesWithProblems)
    if loaded.policies.isEmpty {
        throw ConfigurationError(
            "no policy in `\(configuration.policyDirectory)` compiles",
            help: "check them with `policyctl check \(configuration.policyDirectory)`, or give another directory with `--policies`")
    }
    return policies
}

/// The verifiers of user tokens (static keys, the issuer's key set, introspection, other issuers)
/// and of service tokens; the key sets are fetched once before serving.
private func makeVerifiers(
    _ configuration: ServerConfiguration, metrics: ServerMetrics, logger: Logger
) async throws -> (user: TokenVerifier, service: TokenVerifier) {
    let keySet = try configuration.keySetSource.map { settings throws(ConfigurationError) in
        try KeySetSource(settings: settings, logger: logger, onFetch: { ok, keys in metrics.tokenKeysFetched(ok: ok, keys: keys) })
    }
    if let keySet {
        // One fetch before serving, so the first tokens verify; a failure is retried in the background.
        await keySet.refresh()
    }
    let rules = TokenVerifier.Rules(
        issuer: configuration.tokenIssuer, audience: configuration.tokenAudience,
        leeway: Double(configuration.tokenLeeway.components.seconds), userClaim: configuration.tokenUserClaim)
    if (configuration.introspectionClientID == nil) != (configuration.introspectionClientSecret == nil)
        || configuration.introspection != nil && keySet == nil
    {
        logger.warning(
            "opaque tokens are not introspected: that needs `token.introspection.client.id` and its secret, and the issuer (`token.issuer` or `token.jwks.url`)"
        )
    }
    var others: [TokenVerifier] = []
    for extra in configuration.extraIssuers {
        var settings = configuration.keySet
        settings.issuer = extra.issuer
        settings.jwksURL = nil
        let source = try KeySetSource(settings: settings, logger: logger) { ok, keys in metrics.tokenKeysFetched(ok: ok, keys: keys) }
        await source.refresh()
        var otherRules = rules
        otherRules.issuer = extra.issuer
        otherRules.audience = extra.audience
        others.append(try await TokenVerifier(hs256Secret: nil, es256PublicKeyPEM: nil, rules: otherRules, keySet: source))
    }
    let verifier = try await TokenVerifier(
        hs256Secret: configuration.hs256Secret, es256PublicKeyPEM: configuration.es256PublicKeyPEM, rules: rules, keySet: keySet,
        introspection: configuration.introspection, others: others)
    if !verifier.hasKeys {
        logger.warning("no token keys configured: session and device-session routes refuse every request")
    }
    let serviceVerifier = try await TokenVerifier(
        hs256Secret: configuration.serviceHS256Secret, es256PublicKeyPEM: configuration.serviceES256PublicKeyPEM, rules: rules,
        keySet: nil)
    return (verifier, serviceVerifier)
}

/// A router of `routes` with the server's middleware: the request id and access log, the trace
/// (with a tracer), the metrics and the diagnostic error bodies.
private func makeRouter(_ server: Server, routes: [Server.Route], tracer: (any SpanStarter)?) -> Router<ServerRequestContext> {
    let configuration = server.configuration
    let router = Router(context: ServerRequestContext.self)
    router.add(
        middleware: RequestLogMiddleware(
            accessLogger: configuration.accessLog ? Logger(label: "sessionpolicy.access") : nil,
            hashUsers: configuration.decisionLogHashUsers))
    if let tracer { router.add(middleware: TracingMiddleware(tracer: tracer, userIDs: configuration.tracingUserIDs)) }
    router.add(middleware: MetricsMiddleware(metrics: server.metrics))
    router.add(middleware: DiagnosticErrorMiddleware(routes: routes.map { ($0.method, $0.path) }))
    let decoder = StrictRequestDecoder(limits: RequestLimits(configuration))
    for route in routes {
        let handler = route.handler(server)
        router.on(RouterPath(route.path), method: route.method) { request, context in
            var context = context
            context.requestDecoder = decoder
            return try await handler(request, context)
        }
    }
    return router
}

/// Migrates the store at start (`storage.migrations auto`) or checks that its schema serves.
private func prepareStore(
    _ store: any SessionStore, _ configuration: ServerConfiguration, now: Timestamp, logger: Logger
) async throws {
    do {
        let schema = try await store.prepare(migrate: configuration.migratesAtStart)
        if !schema.pending.isEmpty {
            logger.notice(
                "store migrated", metadata: ["from": "\(schema.applied)", "to": "\(schema.current)", "applied": "\(schema.pending)"])
        } else if schema.applied > schema.current {
            logger.notice(
                "the store's schema is newer than this server's; its newer steps only add, so this server runs against it",
                metadata: ["store": "\(schema.applied)", "server": "\(schema.current)", "oldest_server": "\(schema.oldestServer)"])
        }
    } catch {
        logger.critical("the store cannot be prepared", metadata: ["storage": "\(configuration.storage)", "error": "\(error)"])
        throw error
    }
    if configuration.decisionLogRetention.seconds > 0 {
        await StoreJanitor.prepareDecisionLog(store, now: now, logger: logger)
    }
}

/// Deletes expired tickets and device sessions every minute, and decision log records older than
/// the retention (in batches, so writers never wait for a long delete); closes the store at shutdown.
struct StoreJanitor: Service {
    let store: any SessionStore
    let clock: @Sendable () -> Timestamp
    let decisionLogRetention: TimeSpan
    let logger: Logger
    /// Records deleted per statement.
    static let batch = 1000

    func run() async throws {
        await cancelWhenGracefulShutdown {
            while !Task.isCancelled {
                try? await Task.sleep(for: .seconds(60))
                if Task.isCancelled { break }
                _ = try? await store.purgeExpired(now: clock())
                if decisionLogRetention.seconds > 0 {
                    let now = clock()
                    await Self.prepareDecisionLog(store, now: now, logger: logger)
                    await purgeDecisionLog(before: now.adding(TimeSpan(seconds: -decisionLogRetention.seconds)))
                }
            }
        }
        await store.close()
    }

    /// Creates the decision log's parts ahead of `now` (PostgreSQL's day partitions); a failure
    /// is logged and tried again in a minute (meanwhile the default partition takes the records).
    static func prepareDecisionLog(_ store: any SessionStore, now: Timestamp, logger: Logger) async {
        do {
            for part in try await store.prepareDecisionLog(now: now) {
                logger.info("decision log partition created", metadata: ["partition": "\(part)"])
            }
        } catch {
            logger.warning("decision log partitions not created; trying again in a minute", metadata: ["error": "\(error)"])
        }
    }

    /// Drops the parts of the log past the retention, then deletes its other old records.
    private func purgeDecisionLog(before cutoff: Timestamp) async {
        do {
            for part in try await store.dropDecisions(before: cutoff) {
                logger.info(
                    "decision log partition dropped",
                    metadata: [
                        "partition": "\(part.part)", "records": "\(part.estimatedRecords)", "duration": "\(part.duration)",
                        "retention": "\(decisionLogRetention)",
                    ])
            }
            let n = try await Self.purgeDecisions(store, before: cutoff)
            if n > 0 {
                logger.info("decision log purged", metadata: ["records": "\(n)", "retention": "\(decisionLogRetention)"])
            }
        } catch {
            logger.error("decision log purge failed", metadata: ["error": "\(error)"])
        }
    }

    /// Deletes every record received before `cutoff`, `batch` at a time, letting other writes
    /// in between; how many.
    static func purgeDecisions(_ store: any SessionStore, before cutoff: Timestamp) async throws -> Int {
        var total = 0
        while !Task.isCancelled {
            let n = try await store.purgeDecisions(before: cutoff, limit: batch)
            total += n
            if n < batch { break }
            await Task.yield()
        }
        return total
    }
}

/// Keeps the issuer's key set fresh in the background until shutdown.
struct KeySetRefresher: Service {
    let source: KeySetSource

    func run() async throws {
        await cancelWhenGracefulShutdown { await source.run() }
    }
}

/// Records every request's duration in `/metrics`, by route, method and status.
struct MetricsMiddleware<Context: RequestContext>: RouterMiddleware {
    let metrics: ServerMetrics

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let start = ContinuousClock.now
        do {
            let response = try await next(request, context)
            metrics.request(
                route: context.endpointPath ?? "unmatched", method: request.method.rawValue, status: response.status.code,
                duration: ContinuousClock.now - start)
            return response
        } catch {
            let status = (error as? any HTTPResponseError)?.status.code ?? 500
            metrics.request(
                route: context.endpointPath ?? "unmatched", method: request.method.rawValue, status: status,
                duration: ContinuousClock.now - start)
            throw error
        }
    }
}

/// The API's routes as `METHOD /path` (parameters as `{name}`), for documentation checks.
public var serverRoutes: [String] { Server.routes.map { "\($0.method.rawValue) \($0.path)" } }
