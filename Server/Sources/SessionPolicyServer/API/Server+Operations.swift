import Foundation
import Hummingbird
import Logging
import NIOCore
import SessionPolicy
import SessionPolicyDelivery

/// Health, metrics and what serves.
extension Server {
    /// `GET /healthz`: 200 when the store answers, no session write has waited longer than
    /// `health.max.write.wait`, and at least one policy serves (`status` is `degraded` while the
    /// policy directory has a problem: a file that does not compile, a second file with a name
    /// that serves, a policy kept serving without its file, or while the issuer's key set
    /// could not be fetched: `token_keys` says whether the last keys still verify); else 503.
    func health(_ request: Request, _ context: ServerRequestContext) async throws -> EditedResponse<HealthReport> {
        let snapshot = policies.snapshot
        // The writer first: the store's read below may itself wait up to `store.timeout`.
        let wait = store.oldestWaitingWrite
        var storeOK = true
        do {
            _ = try await store.session(SessionKey(policy: "", user: "", device: ""))
        } catch {
            storeOK = false
            _ = storeFailed("health", error)
        }
        let writerOK = wait.map { $0 <= configuration.healthMaxWriteWait } ?? true
        if !writerOK {
            Logger(label: "sessionpolicy.store").error(
                "a session write has waited too long",
                metadata: ["waited": "\(wait?.display ?? "")", "bound": "\(configuration.healthMaxWriteWait.display)"])
        }
        let healthy = storeOK && writerOK && !snapshot.policies.isEmpty
        let keys = verifier.keySets.map(\.status)
        let report = HealthReport(
            status: !healthy ? "failing" : snapshot.problems.isEmpty && keys.allSatisfy(\.ok) ? "ok" : "degraded",
            store: .init(kind: store.kind, ok: storeOK),
            writer: .init(ok: writerOK, oldestWaitSeconds: wait.map { Double($0.nanoseconds / 1_000_000) / 1000 } ?? 0),
            policies: snapshot.policies.keys.sorted(), version: SessionPolicyRelease.version,
            serving: snapshot.policies.mapValues(\.digest), problems: PoliciesReport.problems(snapshot),
            tokenKeys: keys.isEmpty ? nil : keys)
        return EditedResponse(status: healthy ? .ok : .serviceUnavailable, response: report)
    }

    /// `GET /metrics`: Prometheus text format.
    func metricsText(_ request: Request, _ context: ServerRequestContext) async throws -> Response {
        var buffer = ByteBuffer()
        if let pool = store.poolStatus { metrics.pool(pool) }
        buffer.writeBytes(metrics.render())
        return Response(
            status: .ok, headers: [.contentType: "text/plain; version=0.0.4; charset=utf-8"], body: .init(byteBuffer: buffer))
    }

    /// `GET /v1/policies/{policy}/machine[?keys=KID,...]`: the policy's signed machine
    /// (docs/envelope.md), signed with the key the app pins (`keys`, its pinned key ids), with a
    /// strong `ETag` that every server of the store gives it; 304 when `If-None-Match` names it.
    /// 404 when the server has no signing key, 406 `unpinned-key` when the app pins none of its keys.
    func signedMachine(_ request: Request, _ context: ServerRequestContext) async throws -> Response {
        let name = context.parameters.get("policy") ?? ""
        let snapshot = policies.snapshot
        guard let entry = snapshot.policies[name] else {
            throw APIError.unknownPolicy(name, known: Array(snapshot.policies.keys))
        }
        guard let machines else {
            throw APIError(
                .notFound, .machineNotSigned, "this server signs no machines",
                help: "start it with `--signing-key PEMFILE` (or `SESSIONPOLICY_SIGNING_KEY`) to serve signed machines")
        }
        let pinned = request.uri.queryParameters.get("keys").map {
            $0.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
        }
        let keys = machines.keys
        guard let signer = keys.signer(for: pinned) else {
            metrics.machineKeyMissed()
            throw APIError(
                .notAcceptable, .unpinnedKey,
                "the app pins none of this server's signing keys (`\(keys.all.map(\.keyID).joined(separator: "`, `"))`)",
                help: "an app from before a rotation pins the previous key: keep it as `signing.previous.key` until no app "
                    + "asks for it (docs/signed-machines.md#rotating-the-signing-key)")
        }
        let signed = try await stored("signed_machine") { try await machines.envelope(for: entry, signer: signer, now: clock()) }
        metrics.machineServed(key: signer.keyID, current: signer.keyID == keys.current.keyID)
        var headers: HTTPFields = [.eTag: signed.etag, .cacheControl: "no-cache"]
        if let condition = request.headers[.ifNoneMatch], SignedMachines.matches(condition, etag: signed.etag) {
            return Response(status: .notModified, headers: headers)
        }
        headers[.contentType] = "application/jose"
        return Response(status: .ok, headers: headers, body: .init(byteBuffer: ByteBuffer(string: signed.envelope)))
    }

    /// `GET /v1/policies`: the policies that serve and the policy directory's problems.
    func listPolicies(_ request: Request, _ context: ServerRequestContext) async throws -> PoliciesReport {
        let snapshot = policies.snapshot
        let iso = ISO8601DateFormatter()
        return PoliciesReport(
            policies: snapshot.policies.values.sorted { $0.policy.name < $1.policy.name }.map {
                .init(
                    name: $0.policy.name, description: $0.policy.policy.description, file: $0.file, digest: $0.digest,
                    loadedAt: iso.string(from: $0.loadedAt))
            },
            problems: PoliciesReport.problems(snapshot))
    }
}

struct HealthReport: ResponseEncodable {
    struct Store: Encodable {
        var kind: String
        var ok: Bool
    }
    /// The session writer: how long the oldest write not yet answered has waited (0: none).
    struct Writer: Encodable {
        var ok: Bool
        var oldestWaitSeconds: Double
        enum CodingKeys: String, CodingKey {
            case ok
            case oldestWaitSeconds = "oldest_wait_seconds"
        }
    }
    var status: String
    var store: Store
    var writer: Writer
    var policies: [String]
    /// The server's version.
    var version: String
    /// The machine digest each policy serves, by name.
    var serving: [String: String]
    var problems: [PoliciesReport.Problem]
    /// Each issuer's key set, when keys come from issuers.
    var tokenKeys: [KeySetSource.Status]?
    enum CodingKeys: String, CodingKey {
        case status, store, writer, policies, version, serving, problems
        case tokenKeys = "token_keys"
    }
}

struct PoliciesReport: ResponseEncodable {
    struct Policy: Encodable {
        var name: String
        var description: String?
        var file: String
        var digest: String
        var loadedAt: String
        enum CodingKeys: String, CodingKey {
            case name, description, file, digest
            case loadedAt = "loaded_at"
        }
    }
    struct Problem: Encodable {
        var file: String
        var stillServing: String?
        var diagnostics: [Diagnostic]
        enum CodingKeys: String, CodingKey {
            case file, diagnostics
            case stillServing = "still_serving"
        }
    }
    var policies: [Policy]
    var problems: [Problem]

    static func problems(_ s: PolicyRegistry.Snapshot) -> [Problem] {
        s.problems.map {
            Problem(file: $0.file, stillServing: $0.stillServing, diagnostics: $0.diagnostics.sortedForOutput())
        }
    }
}
