import Foundation
import SessionPolicy
import Testing

/// The field tables (`JSONField`) are the one place each JSON shape's keys are spelled. The fast
/// reader's matching is a `switch` on the key's length: it must match exactly the keys the table
/// spells, and nothing else.
@Suite("JSON field tables")
struct JSONFieldTests {
    /// Every key of every table, and near misses of each.
    static let allKeys: [String] =
        SessionState.Field.keys + SessionState.Failures.Field.keys + Event.Field.keys + Event.DeviceFacts.Field.keys
        + Outcome.Field.keys

    static var probes: [String] {
        var out = Set(allKeys)
        for key in allKeys {
            out.insert(String(key.dropLast()))
            out.insert(key + "s")
            out.insert(key.uppercased())
            out.insert(" " + key)
            out.insert(String(key.reversed()))
        }
        out.insert("")
        return out.sorted()
    }

    static func check<F: JSONField & Equatable>(_: F.Type) {
        for probe in probes {
            let expected = F.allCases.first { $0.key == probe }
            let matched = Array(probe.utf8).withUnsafeBytes { F($0) }
            #expect(matched == expected, "\(F.self) matched `\(probe)` as \(String(describing: matched))")
        }
        // Keys are unique and fit the seen-set of the readers.
        #expect(Set(F.keys).count == F.allCases.count)
        #expect(F.allCases.count <= 32)
        #expect(F.sortedByKey.map(\.key) == F.keys.sorted { Array($0.utf8).lexicographicallyPrecedes(Array($1.utf8)) })
    }

    @Test("each table's matcher matches exactly its own keys")
    func matchers() {
        Self.check(SessionState.Field.self)
        Self.check(SessionState.Failures.Field.self)
        Self.check(Event.Field.self)
        Self.check(Event.DeviceFacts.Field.self)
        Self.check(Outcome.Field.self)
    }

    @Test("the Codable form writes the table's keys")
    func codableKeys() throws {
        let state = SessionState(
            state: .active, user: "u", device: "d", authMode: .pin, lastIdPLogin: .init(millisecondsSinceEpoch: 0),
            lastOnline: .init(millisecondsSinceEpoch: 0), lastActivity: .init(millisecondsSinceEpoch: 0),
            highestTime: .init(millisecondsSinceEpoch: 0))
        let json = try JSONSerialization.jsonObject(with: JSONEncoder().encode(state)) as? [String: Any] ?? [:]
        #expect(Set(json.keys) == Set(SessionState.Field.keys))
        let failures = json["failures"] as? [String: Any] ?? [:]
        #expect(Set(failures.keys) == Set(SessionState.Failures.Field.keys))
    }
}
