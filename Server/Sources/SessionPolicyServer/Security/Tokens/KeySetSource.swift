import AsyncHTTPClient
import Foundation
import Logging
import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1
import NIOSSL

/// An issuer's key set, fetched and kept fresh: at start, again before it goes stale (its
/// `Cache-Control: max-age`, bounded by `cacheMin` and `cacheMax`), and when a token names a
/// key id the set lacks, at most once per `refetchInterval` (a flood of invented key ids is not
/// a flood of requests). When the issuer does not answer, the last good keys stay in use until
/// they are `maxStale` old. Concurrent refreshes share one fetch.
final class KeySetSource: Sendable {
    let settings: KeySetSettings
    /// The HTTP client (its trust roots, its timeouts); the introspector uses it too.
    let client: HTTPClient
    private let logger: Logger
    private let onFetch: @Sendable (_ ok: Bool, _ keys: Int) -> Void

    private struct State {
        var keys: TokenKeys?
        /// When the keys were last fetched successfully.
        var fetchedAt: ContinuousClock.Instant?
        var fetchedAtDate: Date?
        /// When they should be fetched again.
        var refreshAt: ContinuousClock.Instant?
        var lastError: String?
        var lastKidFetch: ContinuousClock.Instant?
        var inFlight: Task<Void, Never>?
        /// The JWKS URL discovery gave.
        var discovered: String?
    }
    private let state = NIOLockedValueBox(State())

    /// A source fetching with its own HTTP client (its own trust roots and timeouts).
    init(
        settings: KeySetSettings, logger: Logger, onFetch: @escaping @Sendable (Bool, Int) -> Void = { _, _ in }
    )
        throws(ConfigurationError)
    {
        var tls = TLSConfiguration.makeClientConfiguration()
        if let ca = settings.caFile {
            guard FileManager.default.isReadableFile(atPath: ca) else {
                throw ConfigurationError("the CA file `\(ca)` cannot be read", help: "give a PEM file of CA certificates")
            }
            tls.additionalTrustRoots = [.file(ca)]
        }
        var configuration = HTTPClient.Configuration(
            tlsConfiguration: tls, redirectConfiguration: .disallow,
            timeout: .init(connect: .init(settings.fetchTimeout), read: .init(settings.fetchTimeout)))
        configuration.httpVersion = .http1Only
        self.client = HTTPClient(eventLoopGroup: HTTPClient.defaultEventLoopGroup, configuration: configuration)
        self.settings = settings
        self.logger = logger
        self.onFetch = onFetch
    }

    /// The keys to verify with, or a refusal when there are none fresh enough.
    func keys() throws(TokenRefusal) -> TokenKeys {
        let (keys, fetchedAt, error) = state.withLockedValue { ($0.keys, $0.fetchedAt, $0.lastError) }
        guard let keys, let fetchedAt else {
            throw TokenRefusal(
                "the issuer's keys could not be fetched from \(settings.source)\(error.map { " (\($0))" } ?? "")",
                signatureMatched: false)
        }
        let age = ContinuousClock.now - fetchedAt
        guard age <= settings.maxStale else {
            throw TokenRefusal(
                "the issuer's keys are \(Self.display(age)) old, past `token.jwks.max.stale` "
                    + "(\(Self.display(settings.maxStale))); the issuer has not answered since (\(error ?? "no error"))",
                signatureMatched: false)
        }
        return keys
    }

    /// Whether the keys may be used now (fetched, and not past `maxStale`): one lock, no copy
    /// (it runs for every request whose token is cached).
    var isUsable: Bool {
        state.withLockedValue { s in s.keys != nil && s.fetchedAt.map { ContinuousClock.now - $0 <= settings.maxStale } == true }
    }

    /// What `/healthz` reports.
    struct Status: Encodable, Sendable {
        var source: String
        /// The last fetch succeeded and the keys are usable.
        var ok: Bool
        /// The keys are usable (perhaps stale: the last fetch failed).
        var usable: Bool
        var ageSeconds: Double?
        var keys: [String]
        var error: String?
        enum CodingKeys: String, CodingKey {
            case source, ok, usable, keys, error
            case ageSeconds = "age_seconds"
        }
    }

    var status: Status {
        let s = state.withLockedValue { $0 }
        let usable = isUsable
        return Status(
            source: settings.source, ok: usable && s.lastError == nil, usable: usable,
            ageSeconds: s.fetchedAt.map { Self.seconds(ContinuousClock.now - $0) }, keys: s.keys?.kids ?? [],
            error: s.lastError)
    }

    /// A token named a key id the set lacks: fetches the set again, unless a fetch for that
    /// reason began within `refetchInterval`; then joins that fetch if it is still under way.
    /// The caller looks for the key again afterwards, whatever happened here: requests that
    /// arrive while the new key is being fetched wait for it instead of being refused.
    func refetchForUnknownKid() async {
        let now = ContinuousClock.now
        let (allowed, underWay) = state.withLockedValue { s -> (Bool, Task<Void, Never>?) in
            if let last = s.lastKidFetch, now - last < settings.refetchInterval { return (false, s.inFlight) }
            s.lastKidFetch = now
            return (true, nil)
        }
        if allowed {
            await refresh()
        } else if let underWay {
            await underWay.value
        }
    }

    /// Fetches the key set now (joining a fetch under way).
    func refresh() async {
        let task = state.withLockedValue { s -> Task<Void, Never> in
            if let task = s.inFlight { return task }
            let task = Task { await self.fetchAndStore() }
            s.inFlight = task
            return task
        }
        await task.value
    }

    /// Refreshes before the keys go stale, and retries after a failure, until cancelled; then
    /// shuts the HTTP client down.
    func run() async {
        while !Task.isCancelled {
            let wait = state.withLockedValue { s -> Duration in
                guard let refreshAt = s.refreshAt else { return .zero }
                return max(.zero, refreshAt - ContinuousClock.now)
            }
            if wait > .zero { try? await Task.sleep(for: wait) }
            if Task.isCancelled { break }
            await refresh()
        }
        try? await client.shutdown()
    }

    /// Shuts the HTTP client down (for a source never `run`).
    func shutdown() async { try? await client.shutdown() }

    private func fetchAndStore() async {
        let started = ContinuousClock.now
        do {
            let (keys, skipped, lifetime) = try await fetch()
            let refreshIn = lifetime * 4 / 5
            state.withLockedValue {
                $0.keys = keys
                $0.fetchedAt = started
                $0.fetchedAtDate = Date()
                $0.refreshAt = started + refreshIn
                $0.lastError = nil
                $0.inFlight = nil
            }
            onFetch(true, keys.keys.count)
            logger.debug(
                "token keys fetched",
                metadata: ["source": "\(settings.source)", "kids": "\(keys.kids)", "refresh_in": "\(Self.display(refreshIn))"])
            if !skipped.isEmpty { logger.notice("token keys skipped", metadata: ["skipped": "\(skipped)"]) }
        } catch {
            // Retry soon, but not in a loop: the least of the cache bound and the kid interval.
            let retry = min(settings.cacheMin, settings.refetchInterval)
            state.withLockedValue {
                $0.lastError = error.description
                $0.refreshAt = started + max(retry, .seconds(1))
                $0.discovered = nil
                $0.inFlight = nil
            }
            onFetch(false, 0)
            logger.error("token keys could not be fetched", metadata: ["source": "\(settings.source)", "error": "\(error)"])
        }
    }

    /// The keys, the JWKS's skipped entries and how long to use them.
    private func fetch() async throws(KeySetError) -> (TokenKeys, [String], Duration) {
        if let url = settings.jwksURL, url.hasPrefix("file:") {
            let path = String(url.dropFirst("file:".count)).replacingOccurrences(of: "^//", with: "", options: .regularExpression)
            guard let data = FileManager.default.contents(atPath: path) else {
                throw KeySetError("the key set file `\(path)` cannot be read")
            }
            let (keys, skipped) = try await TokenKeys.parse(jwks: data)
            return (keys, skipped, settings.cacheMin)
        }
        let jwksURL = try await jwksLocation()
        let (body, maxAge) = try await get(jwksURL, what: "the JWKS")
        let (keys, skipped) = try await TokenKeys.parse(jwks: body)
        let lifetime = min(max(maxAge ?? settings.cacheMin, settings.cacheMin), settings.cacheMax)
        return (keys, skipped, lifetime)
    }

    /// The JWKS URL: configured, or from the issuer's discovery document, whose `issuer` must
    /// be the configured one exactly (OpenID Connect Discovery 1.0 §4.3).
    private func jwksLocation() async throws(KeySetError) -> String {
        if let url = settings.jwksURL { return url }
        if let known = state.withLockedValue({ $0.discovered }) { return known }
        guard let issuer = settings.issuer else { throw KeySetError("no issuer and no JWKS URL are configured") }
        let (body, _) = try await get(KeySetSettings.discoveryURL(issuer), what: "the discovery document")
        struct Discovery: Decodable {
            var issuer: String
            var jwks_uri: String
        }
        guard let document = try? JSONDecoder().decode(Discovery.self, from: body) else {
            throw KeySetError("the discovery document has no `issuer` and `jwks_uri` strings")
        }
        guard document.issuer == issuer else {
            throw KeySetError("the discovery document's `issuer` is `\(document.issuer)`, not `\(issuer)`")
        }
        if let problem = KeySetSettings.problem(url: document.jwks_uri, allowFile: false) {
            throw KeySetError("the discovery document's `jwks_uri`: \(problem)")
        }
        state.withLockedValue { $0.discovered = document.jwks_uri }
        return document.jwks_uri
    }

    /// Most bytes read of a discovery document or a JWKS.
    static let maxBody = 1 << 20

    /// GETs `url`: its body and `Cache-Control: max-age`, or why not.
    private func get(_ url: String, what: String) async throws(KeySetError) -> (Data, Duration?) {
        do {
            var request = HTTPClientRequest(url: url)
            request.headers.add(name: "Accept", value: "application/json")
            let response = try await client.execute(request, timeout: .init(settings.fetchTimeout))
            guard response.status == .ok else {
                throw KeySetError("\(what) at \(url) answered \(response.status.code)")
            }
            let body = try await response.body.collect(upTo: Self.maxBody)
            return (Data(buffer: body), Self.maxAge(response.headers["Cache-Control"].joined(separator: ",")))
        } catch let error as KeySetError {
            throw error
        } catch {
            throw KeySetError("\(what) at \(url) could not be fetched: \(error)")
        }
    }

    /// The `max-age` of a `Cache-Control` header (RFC 9111 §5.2.2.1); `no-cache` and
    /// `no-store` as 0; nil when it says neither.
    static func maxAge(_ header: String) -> Duration? {
        var age: Duration?
        for directive in header.split(separator: ",") {
            let parts = directive.split(separator: "=", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces).lowercased() }
            switch parts.first {
            case "no-cache", "no-store": return .zero
            case "max-age": if parts.count == 2, let n = Int64(parts[1].trimmingCharacters(in: ["\""])), n >= 0 { age = .seconds(n) }
            default: break
            }
        }
        return age
    }

    static func seconds(_ d: Duration) -> Double { Double(d.components.seconds) + Double(d.components.attoseconds) / 1e18 }
    static func display(_ d: Duration) -> String { String(format: "%.0fs", seconds(d)) }
}
