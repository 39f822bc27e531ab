import Foundation
import SessionPolicy
import SessionPolicyTestSupport
import Testing

@Suite("JSON shapes")
struct CodableTests {
    func json(_ v: some Encodable) throws -> String {
        let e = JSONEncoder()
        e.outputFormatting = [.sortedKeys]
        return String(decoding: try e.encode(v), as: UTF8.self)
    }

    @Test("session state, event and outcome have the documented shape and round-trip")
    func shapes() throws {
        let t = Timestamp.parse("2026-03-01T09:00:00Z")!
        let state = SessionState(
            state: .suspended, user: "alice", device: "d1", authMode: .biometric, lastIdPLogin: t,
            lastOnline: t, lastActivity: t, highestTime: t, failures: .init(biometric: 1))
        #expect(
            try json(state)
                == #"{"auth_mode":"biometric","biometric_locked":false,"device":"d1","failures":{"biometric":1,"idp_login":0,"offline_login":0},"highest_time":"2026-03-01T09:00:00Z","last_activity":"2026-03-01T09:00:00Z","last_idp_login":"2026-03-01T09:00:00Z","last_online":"2026-03-01T09:00:00Z","read_only":false,"state":"suspended","user":"alice"}"#
        )
        #expect(try JSONDecoder().decode(SessionState.self, from: Data(json(state).utf8)) == state)

        let event = Event(.launch, at: t.adding(.days(2)), network: .offline, user: "alice", device: .init(id: "d1", keystore: .hardware))
        #expect(
            try json(event)
                == #"{"device":{"id":"d1","keystore":"hardware"},"network":"offline","time":"2026-03-03T09:00:00Z","type":"launch","user":"alice"}"#
        )
        #expect(try JSONDecoder().decode(Event.self, from: Data(json(event).utf8)) == event)

        let p = try Fixtures.policy("kobil-offline-token")
        let o = p.evaluate(state, event)
        let decoded = try JSONDecoder().decode(Outcome.self, from: Data(json(o).utf8))
        #expect(decoded == o)
        #expect(try json(o).contains(#""decision":"require_biometric""#))
        #expect(try json(o).contains(#""scope":"bio_auth_offline""#))
    }

    @Test("unknown values are errors, not defaults")
    func strict() {
        #expect(throws: DecodingError.self) {
            try JSONDecoder().decode(Event.self, from: Data(#"{"type":"teleport","time":"2026-03-01T09:00:00Z"}"#.utf8))
        }
        #expect(throws: DecodingError.self) {
            try JSONDecoder().decode(Event.self, from: Data(#"{"type":"launch","time":"yesterday"}"#.utf8))
        }
        #expect(throws: DecodingError.self) {
            try JSONDecoder().decode(SessionState.self, from: Data(#"{"state":"sleeping"}"#.utf8))
        }
    }

    /// Input the lenient storage form (`Codable`) takes and `init(json:)` refuses, with the code
    /// and place of the refusal.
    static let lenient: [(text: String, code: String, line: Int, column: Int)] = [
        (#"{"state": "active", "colour": "blue"}"#, "unknown-key", 1, 21),
        (#"{"state": "active", "user": "alice", "user": "bob"}"#, "duplicate-key", 1, 38),
        (#"{"state": "active",}"#, "invalid-json", 1, 19),
        (#"{"state": "active", "user": " alice"}"#, "invalid-value", 1, 29),
        (#"{"state": "active", "failures": {"biometric": -1, "offline_login": 0, "idp_login": 0}}"#, "invalid-value", 1, 47),
        (#"{"state": "active", "failures": {"biometric": 1.0, "offline_login": 0, "idp_login": 0}}"#, "wrong-type", 1, 47),
    ]

    @Test("SessionState(json:) applies the input rules the lenient storage form does not", arguments: lenient)
    func strictState(_ text: String, _ code: String, _ line: Int, _ column: Int) throws {
        #expect((try? JSONDecoder().decode(SessionState.self, from: Data(text.utf8))) != nil, "the storage form reads \(text)")
        do {
            _ = try SessionState(json: Data(text.utf8), file: "state.json")
            Issue.record("read \(text)")
        } catch {
            let d = try #require(error.diagnostics.first)
            #expect(d.code.rawValue == code, "\(text): \(d)")
            #expect(d.location == SourceLocation(file: "state.json", line: line, column: column), "\(text): \(d)")
        }
    }

    @Test("Event(json:) refuses an event without the context its kind needs; both entry points read what the writer wrote")
    func strictEvent() throws {
        let launch = #"{"type": "launch", "time": "2026-03-01T09:00:00Z"}"#
        #expect((try? JSONDecoder().decode(Event.self, from: Data(launch.utf8))) != nil)
        #expect(throws: DiagnosticError.self) { try Event(json: Data(launch.utf8)) }
        let t = Timestamp.parse("2026-03-01T09:00:00Z")!
        let event = Event(.launch, at: t, network: .offline, user: "alice", device: .init(id: "d1"), attributes: ["tier": "gold"])
        #expect(try Event(json: Data(json(event).utf8)) == event)
        let state = SessionState(state: .active, user: "alice", lastOnline: t, failures: .init(idpLogin: 2))
        #expect(try SessionState(json: Data(json(state).utf8)) == state)
        // The reference path, past the fast reader: an escape.
        #expect(try SessionState(json: Data(#"{"state": "\u0061ctive"}"#.utf8)) == SessionState(state: .active))
    }
}
