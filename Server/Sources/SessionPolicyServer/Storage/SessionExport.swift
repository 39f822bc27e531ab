import Foundation
import SessionPolicy

/// The stored sessions of one policy as JSON lines (`policyctl-sessions`, which
/// `policyctl diff --storage` runs): one object per session, keys sorted,
/// `{"device","revision","state","updated_at","user"}`, `state` as the store keeps it.
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
        while true {
            let page = try await store.sessionPage(policy: policy, after: after, limit: pageSize)
            var text = ""
            for (key, stored) in page { text += line(key, stored) + "\n" }
            if !text.isEmpty { write(text) }
            count += page.count
            guard page.count == pageSize, let last = page.last else { return count }
            after = last.key
        }
    }

    /// One session's line, without the newline.
    public static func line(_ key: SessionKey, _ stored: StoredSession) -> String {
        "{\"device\":\(quoted(key.device)),\"revision\":\(stored.revision),\"state\":\(StoredJSON.encode(stored.state)),"
            + "\"updated_at\":\(quoted(stored.updatedAt.description)),\"user\":\(quoted(key.user))}"
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
        while count < limit {
            query.limit = min(500, limit - count)
            let page = try await store.decisions(query)
            var text = ""
            for r in page { text += line(r) + "\n" }
            if !text.isEmpty { write(text) }
            count += page.count
            guard page.count == query.limit, let last = page.last else { break }
            query.before = last.id
        }
        return count
    }

    /// One record's line, keys sorted, without the newline.
    public static func line(_ r: DecisionRecord) -> String {
        let notices = r.notices.map(quoted).joined(separator: ",")
        return "{\"decision\":\(r.decision.map(quoted) ?? "null"),\"device\":\(quoted(r.device)),\"digest\":\(quoted(r.digest)),"
            + "\"event\":\(quoted(r.event)),\"id\":\(r.id),\"network\":\(r.network.map(quoted) ?? "null"),\"notices\":[\(notices)],"
            + "\"policy\":\(quoted(r.policy)),\"reason\":\(quoted(r.reason)),\"received_at\":\(quoted(r.serverTime.description)),"
            + "\"revision\":\(r.revision),\"state\":\(quoted(r.state)),\"time\":\(quoted(r.eventTime.description)),"
            + "\"transition\":\(r.transition),\"user\":\(quoted(r.user))}"
    }

    /// `s` as a JSON string.
    static func quoted(_ s: String) -> String {
        (try? String(decoding: JSONEncoder().encode(s), as: UTF8.self)) ?? "\"\""
    }
}
