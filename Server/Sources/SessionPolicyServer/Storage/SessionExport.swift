import Foundation
import SessionPolicy
public import SessionPolicyDelivery

/// The stored sessions of one policy as JSON lines (`policyctl-sessions`, which
/// `policyctl diff --storage` runs): one `ExportedSession` per line, keys sorted,
/// `{"device","revision","state","updated_at","user"}`, `state` as the store keeps it; and the
/// decision log's records, one `DecisionRecord` per line.
public enum SessionExport {
    /// Sessions read per query.
    public static let pageSize = 1_000

    /// Reads every stored session of `policy`, a page at a time (memory does not grow with their
    /// number), and hands each page's lines to `write`. Returns how many sessions there were.
    @discardableResult
    public static func export(
        _ store: any SessionStore, policy: String, pageSize: Int = pageSize, write: (String) -> Void
    ) async throws -> Int {
        var after: SessionKey?
        var count = 0
        let encoder = lineEncoder
        while true {
            let page = try await store.sessionPage(policy: policy, after: after, limit: pageSize)
            var text = ""
            for (key, stored) in page { text += try line(key, stored, encoder) + "\n" }
            if !text.isEmpty { write(text) }
            count += page.count
            guard page.count == pageSize, let last = page.last else { return count }
            after = last.key
        }
    }

    /// One session's line, without the newline.
    public static func line(_ key: SessionKey, _ stored: StoredSession) throws -> String {
        try line(key, stored, lineEncoder)
    }

    static func line(_ key: SessionKey, _ stored: StoredSession, _ encoder: JSONEncoder) throws -> String {
        let session = ExportedSession(
            user: key.user, device: key.device, revision: stored.revision, state: stored.state, updatedAt: stored.updatedAt)
        return String(decoding: try encoder.encode(session), as: UTF8.self)
    }

    /// Up to `limit` of the decision log's records matching `query`, newest first, as JSON lines
    /// (`policyctl-sessions --decisions-of`, which `policyctl history` runs), a page at a time.
    /// Returns how many.
    @discardableResult
    public static func decisions(
        _ store: any SessionStore, _ query: DecisionQuery, limit: Int, write: (String) -> Void
    ) async throws -> Int {
        var query = query
        var count = 0
        let encoder = lineEncoder
        while count < limit {
            query.limit = min(500, limit - count)
            let page = try await store.decisions(query)
            var text = ""
            for r in page { text += String(decoding: try encoder.encode(r), as: UTF8.self) + "\n" }
            if !text.isEmpty { write(text) }
            count += page.count
            guard page.count == query.limit, let last = page.last else { break }
            query.before = last.id
        }
        return count
    }

    /// One record's line, keys sorted, without the newline.
    public static func line(_ r: DecisionRecord) throws -> String {
        String(decoding: try lineEncoder.encode(r), as: UTF8.self)
    }

    /// The lines' encoder: compact, keys sorted, `/` as it is (as the stores keep JSON).
    static var lineEncoder: JSONEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return encoder
    }

    /// `s` as a JSON string.
    static func quoted(_ s: String) -> String {
        (try? String(decoding: JSONEncoder().encode(s), as: UTF8.self)) ?? "\"\""
    }
}
