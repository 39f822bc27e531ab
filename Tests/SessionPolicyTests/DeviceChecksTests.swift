import SessionPolicy
import SessionPolicyTestSupport
import SessionPolicyYAML
import Testing

/// The device-check table of docs/how-a-decision-is-made.md (integrity and binding per event) is the contract: this
/// suite reads it and holds the engine to every row, in every state.
@Suite("Device checks")
struct DeviceChecksTests {
    struct Row: Sendable, CustomTestStringConvertible {
        var event: EventKind
        var integrity: String
        var binding: String
        var testDescription: String { event.rawValue }
    }

    /// The rows of the table whose header names `device.compromised` and `device.bind_session`.
    static let rows: [Row] = {
        let lines = Fixtures.text("docs/how-a-decision-is-made.md").components(separatedBy: "\n")
        guard let header = lines.firstIndex(where: { $0.hasPrefix("| event | integrity (`device.compromised`)") }) else { return [] }
        var rows: [Row] = []
        for line in lines[(header + 2)...] {
            guard line.hasPrefix("|") else { break }
            let cells = line.split(separator: "|").map { $0.trimmingCharacters(in: .whitespaces) }
            guard cells.count == 3, let kind = EventKind(rawValue: cells[0].replacingOccurrences(of: "`", with: "")) else {
                rows.append(Row(event: .launch, integrity: "unreadable row: \(line)", binding: ""))
                continue
            }
            rows.append(Row(event: kind, integrity: cells[1], binding: cells[2]))
        }
        return rows
    }()

    static let policy = try! PolicyFile.compile(
        text: """
            version: 1
            name: device-checks
            auth_modes: { offline: [none, biometric] }
            device: { single_user: true, bind_session: true, compromised: idp_login }
            cross_app: { adopt: allow, apps: [app-1] }
            """, file: "device-checks.yaml"
    ).get()

    static let t0 = Timestamp.parse("2026-03-01T09:00:00Z")!

    static func session(_ state: MachineState) -> SessionState {
        guard state.hasSession else { return SessionState(highestTime: t0) }
        return SessionState(
            state: state, user: "alice", device: "phone-1", authMode: .unprotected, lastIdPLogin: t0, lastOnline: t0,
            lastActivity: t0, highestTime: t0)
    }

    /// An event of `kind` with every fact any kind needs.
    static func event(_ kind: EventKind, device: String, integrity: Integrity = .ok, at: Timestamp = t0.adding(.seconds(60))) -> Event {
        var e = Event(
            kind, at: at, network: .offline, user: "alice", device: .init(id: device, keystore: .hardware, integrity: integrity),
            authMode: .unprotected, cause: .network)
        e.appID = "app-1"
        return e
    }

    @Test("the table has one row per event, each readable")
    func complete() {
        #expect(Self.rows.map(\.event.rawValue).sorted() == EventKind.allCases.map(\.rawValue).sorted())
        #expect(Self.rows.allSatisfy { ["first", "not checked"].contains($0.integrity) }, "\(Self.rows.map(\.integrity))")
        #expect(
            Self.rows.allSatisfy { r in ["after the clock", "a switch", "second", "not checked"].contains { r.binding.hasPrefix($0) } })
    }

    @Test("integrity: checked first in every state, or not at all", arguments: rows)
    func integrity(_ row: Row) {
        for state in MachineState.allCases {
            // Another device as well: integrity must come before binding.
            let o = Self.policy.evaluate(Self.session(state), Self.event(row.event, device: "phone-2", integrity: .compromised))
            if row.integrity == "first" {
                #expect(o.reason == .deviceCompromised && o.decision == .idpLogin, "\(state): \(o.reason)")
            } else {
                #expect(o.reason != .deviceCompromised, "\(state)")
            }
        }
    }

    @Test("binding: a device event from another device wipes the session, as the table says", arguments: rows)
    func binding(_ row: Row) {
        for state in MachineState.allCases where state.hasSession {
            let o = Self.policy.evaluate(Self.session(state), Self.event(row.event, device: "phone-2"))
            if row.binding.hasPrefix("not checked") {
                #expect(o.reason != .deviceMismatch, "\(state)")
            } else if row.binding.hasPrefix("a switch") {
                // The previous session is wiped; the new login (no rules here) binds the new device.
                #expect(o.decision == .wipe && o.reason == .deviceMismatch, "\(state): \(o.reason)")
                #expect(o.state.state == .active && o.state.device == "phone-2" && o.state.user == "alice", "\(state)")
            } else {
                #expect(o.decision == .wipe && o.reason == .deviceMismatch, "\(state): \(o.reason)")
                #expect(o.state == SessionState(highestTime: Self.t0.adding(.seconds(60))), "\(state)")
            }
            // Only login attempts check the clock, and before binding.
            let back = Self.policy.evaluate(
                Self.session(state), Self.event(row.event, device: "phone-2", at: Self.t0.adding(.seconds(-3600))))
            let attempt = row.event == .biometricSucceeded ? state == .awaitingBiometric : state != .awaitingIdP
            if row.binding.hasPrefix("after the clock"), attempt {
                #expect(back.reason == .clockRollback, "\(state): \(back.reason)")
            } else if row.binding.hasPrefix("second") || row.binding.hasPrefix("after the clock") {
                #expect(back.reason == .deviceMismatch, "\(state): \(back.reason)")
            }
        }
        // Signed out there is no session to bind.
        let o = Self.policy.evaluate(Self.session(.signedOut), Self.event(row.event, device: "phone-2"))
        #expect(o.reason != .deviceMismatch)
    }

    @Test("the same device, or an event or session without a device id, is never a mismatch", arguments: rows)
    func noMismatch(_ row: Row) {
        for state in MachineState.allCases where state.hasSession {
            var unbound = Self.session(state)
            unbound.device = nil
            var anonymous = Self.event(row.event, device: "phone-1")
            anonymous.device.id = nil
            for (s, e) in [
                (Self.session(state), Self.event(row.event, device: "phone-1")), (unbound, Self.event(row.event, device: "phone-2")),
                (Self.session(state), anonymous),
            ] {
                #expect(Self.policy.evaluate(s, e).reason != .deviceMismatch, "\(state)")
            }
        }
    }
}
