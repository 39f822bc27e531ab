import Foundation
import SessionPolicy
import SessionPolicyTestSupport

/// Seeded random events, one at a time from the current state, whose times cluster at the
/// policy's boundaries: exactly at a limit from each time the state records, a millisecond and a
/// second either side, clocks set back within and beyond the tolerance; online/offline flips,
/// failures on every path, server signals, other users and devices, missing facts, attributes
/// valid and invalid.
struct SequenceGenerator {
    let policy: Policy
    /// The policy's limits in milliseconds (session max, idle, window, clock tolerance) and a few
    /// everyday steps.
    let limits: [Int64]

    static let start = Timestamp(millisecondsSinceEpoch: 1_775_462_400_000)  // 2026-04-06T08:00:00Z
    static let users = ["alice", "bob", "zo\u{EB}", "zoe\u{308}"]  // the last two: one name in NFC and NFD, two users
    static let devices = ["phone-1", "phone-2"]

    init(policy: Policy) {
        self.policy = policy
        var l: [Int64] = []
        for span in [policy.session.max, policy.session.idle, policy.offline.window, policy.device.clockTolerance].compactMap({ $0 }) {
            l.append(span.seconds * 1000)
        }
        self.limits = l
    }

    /// A random initial state: mostly signed out (clean), sometimes any state with any fields.
    func initialState(_ r: inout SplitMix) -> SessionState {
        if r.below(100) < 60 {
            return r.below(2) == 0 ? .signedOut : SessionState(highestTime: Self.start)
        }
        func ago() -> Timestamp? {
            if r.below(6) == 0 { return nil }
            let back = r.pick(limits + [0, 1000, 3_600_000, 86_400_000])
            let delta: Int64 = r.pick([0, 0, -1, 1, -1000, 1000])
            return Timestamp(millisecondsSinceEpoch: Self.start.millisecondsSinceEpoch - back + delta)
        }
        func count(_ max: Int) -> Int { r.pick([0, 0, Swift.max(0, max - 1), max, max + 1]) }
        let states = MachineState.allCases.filter { $0 != .signedOut }
        return SessionState(
            state: r.pick(states), user: r.below(5) == 0 ? nil : r.pick(Self.users),
            device: r.below(4) == 0 ? nil : r.pick(Self.devices),
            authMode: r.pick([AuthMode.unprotected, .biometric, .biometric, .password, .pin, nil]),
            lastIdPLogin: ago(), lastOnline: ago(), lastActivity: ago(), highestTime: ago(),
            failures: .init(
                biometric: count(policy.retry.biometric.max), offlineLogin: count(policy.retry.offlineLogin.max),
                idpLogin: count(policy.retry.idpLogin.max)),
            readOnly: r.below(5) == 0, biometricLocked: r.below(5) == 0)
    }

    /// The time of the next event, from the state it meets.
    func time(_ r: inout SplitMix, _ s: SessionState, previous: Timestamp) -> Timestamp {
        let recorded = [s.lastIdPLogin, s.lastOnline, s.lastActivity, s.highestTime].compactMap { $0 }
        let highest = recorded.max() ?? previous
        let near: [Int64] = [0, 0, -1, 1, -1000, 1000]
        switch r.below(10) {
        case 0, 1, 2:
            // A limit from a time the state records, at the boundary.
            let base = r.pick(recorded.isEmpty ? [previous] : recorded)
            let limit = limits.isEmpty ? 86_400_000 : r.pick(limits)
            return Timestamp(millisecondsSinceEpoch: base.millisecondsSinceEpoch + limit + r.pick(near))
        case 3:
            // The clock set back around the tolerance, or far.
            let tolerance = policy.device.clockTolerance.seconds * 1000
            let back: Int64 = r.pick([tolerance, tolerance, 2 * 86_400_000, 1000] as [Int64])
            return Timestamp(millisecondsSinceEpoch: highest.millisecondsSinceEpoch - back + r.pick(near))
        case 4:
            return previous  // at the same time
        default:
            let step: Int64 = r.pick([1, 1000, 60_000, 3_600_000, 86_400_000, 3 * 86_400_000])
            return Timestamp(millisecondsSinceEpoch: previous.millisecondsSinceEpoch + step)
        }
    }

    /// A random event for the state `s`.
    func event(_ r: inout SplitMix, _ s: SessionState, previous: Timestamp) -> Event {
        func maybe(_ percent: Int) -> Bool { r.below(100) < percent }
        // Every kind, weighted by the state so that each state's own events come up often
        // (a pending prompt's answers, a signed-out app's logins).
        var weights: [(EventKind, Int)] = [
            (.launch, 12), (.resume, 6), (.background, 8), (.biometricSucceeded, 2), (.biometricFailed, 2),
            (.offlineLoginFailed, 4), (.idpLoginSucceeded, 8), (.idpLoginFailed, 4), (.tokenRefreshed, 6), (.refreshFailed, 3),
            (.accountDeactivated, 1), (.tokensRevoked, 1), (.licenseRevoked, 2), (.biometricEnrollmentChanged, 2), (.logout, 2),
            (.register, 2), (.deviceSessionDetected, 3),
        ]
        func boost(_ k: EventKind, _ by: Int) { if let i = weights.firstIndex(where: { $0.0 == k }) { weights[i].1 += by } }
        switch s.state {
        case .awaitingBiometric:
            boost(.biometricSucceeded, 24)
            boost(.biometricFailed, 18)
        case .signedOut:
            boost(.idpLoginSucceeded, 16)
            boost(.deviceSessionDetected, 4)
        case .awaitingIdP:
            boost(.idpLoginSucceeded, 10)
            boost(.idpLoginFailed, 4)
        case .active, .suspended, .readOnly:
            boost(.launch, 6)
            boost(.offlineLoginFailed, 2)
        }
        var pick = r.below(weights.reduce(0) { $0 + $1.1 })
        var kind = EventKind.launch
        for (k, w) in weights {
            if pick < w {
                kind = k
                break
            }
            pick -= w
        }
        var e = Event(kind, at: time(&r, s, previous: previous))
        // Network: mostly reported, sometimes missing (an incomplete launch, resume or register).
        e.network = maybe(96) ? r.pick([Network.online, Network.offline]) : nil
        // The user: the session's own most of the time, another, or none.
        if kind == .idpLoginSucceeded || kind == .deviceSessionDetected {
            e.user = maybe(95) ? (maybe(65) ? (s.user ?? r.pick(Self.users)) : r.pick(Self.users)) : nil
        } else if maybe(50) {
            e.user = maybe(80) ? (s.user ?? r.pick(Self.users)) : r.pick(Self.users)
        }
        // The device.
        if maybe(85) { e.device.id = maybe(85) ? (s.device ?? r.pick(Self.devices)) : r.pick(Self.devices) }
        if maybe(70) { e.device.keystore = r.pick([Keystore.hardware, .hardware, .software, .absent]) }
        if maybe(70) { e.device.integrity = maybe(3) ? Integrity.compromised : Integrity.ok }
        if kind == .idpLoginSucceeded {
            e.authMode = maybe(95) ? r.pick([AuthMode.unprotected, .biometric, .unprotected, .biometric, .password, .pin]) : nil
        } else if maybe(5) {
            e.authMode = r.pick([AuthMode.unprotected, .biometric, .password])
        }
        if kind == .refreshFailed { e.cause = maybe(95) ? r.pick([RefreshFailureCause.network, .invalidToken]) : nil }
        if kind == .logout, maybe(50) { e.unsyncedItems = r.pick([0, 1, 7]) }
        if kind == .deviceSessionDetected {
            e.appID = maybe(95) ? r.pick(PolicyGenerator.apps + ["com.example.other"]) : nil
        }
        // Attributes: each declared one usually, valid or (now and then) not; rarely an undeclared one.
        for a in policy.attributes where maybe(75) {
            e.attributes[a.name] = maybe(2) ? invalidValue(&r, a.type) : validValue(&r, a.type)
        }
        if maybe(1) { e.attributes[r.pick(["tier", "Attr0", "zz"])] = "1" }
        return e
    }

    func validValue(_ r: inout SplitMix, _ type: AttributeType) -> String {
        switch type {
        case let .words(words): return r.pick(words + (words.contains("zo\u{EB}") ? ["zoe\u{308}"] : []))
        case .version: return r.pick(["2.4.0", "2.4", "2.3.99", "10", "2.4.0.0", "002.004"])
        case .boolean: return r.pick(["true", "false"])
        case .integer: return r.pick(["0", "3", "4", "5", "-3", "007", "9223372036854775807"])
        case .duration: return r.pick(["0s", "3d", "2d23h59m59s", "72h", "1d12h", "12h1d", "30d", "36600d"])
        case .string: return r.pick(["x", "y", "zo\u{EB}", "zoe\u{308}", ""])
        }
    }

    func invalidValue(_ r: inout SplitMix, _ type: AttributeType) -> String {
        switch type {
        case .words: return r.pick(["", "GOLD", "maybe"])
        case .version: return r.pick(["1.", ".1", "v2", "+1", "1.2.3.4.5", ""])
        case .boolean: return r.pick(["True", "1", ""])
        case .integer: return r.pick(["1.5", "+5", " 5", "", "9223372036854775808"])
        case .duration: return r.pick(["3", "-1d", "1.5d", "36601d", "3D", ""])
        case .string: return "anything"  // every value is a string
        }
    }
}

/// String equality as docs/machine-format.md defines it: the same Unicode scalars in the same
/// order (no normalization), not Swift's `==` on `String` (canonical equivalence).
func sameScalars(_ a: String, _ b: String) -> Bool {
    a.unicodeScalars.elementsEqual(b.unicodeScalars)
}
