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

    /// `s` as a JSON string.
    static func quoted(_ s: String) -> String {
        (try? String(decoding: JSONEncoder().encode(s), as: UTF8.self)) ?? "\"\""
    }
}
