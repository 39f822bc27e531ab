extension StateMachine {
    /// How a guard reads: a short label for graphs (`since idp login > 90d`) and a sentence in
    /// policy vocabulary for explanations and tables. The one description of each guard, used
    /// by every renderer.
    package func wording(_ g: Guard) -> (label: String, sentence: String) {
        switch g {
        case .always: return ("otherwise", "otherwise")
        case .deviceCompromised: return ("device compromised", "the device failed its integrity check")
        case let .clockRolledBack(t):
            return ("clock back > \(t)", "the clock went back more than \(t) before the highest time seen")
        case .differentUser: return ("different user", "the event names another user than the session's")
        case .differentDevice: return ("different device", "the event comes from another device than the session's")
        case let .sessionMaxExceeded(l): return ("since idp login > \(l)", "more than \(l) since the last IdP login")
        case let .idleExceeded(l): return ("idle > \(l)", "more than \(l) since the last activity")
        case let .offlineWindowExceeded(l): return ("since online > \(l)", "more than \(l) since the last online validation")
        case .authModeMissing: return ("no auth mode", "the session records no auth mode")
        case .authModeNeedsIdP: return ("mode password or pin", "the auth mode is password or pin")
        case let .authModeNotOffline(modes):
            return ("mode not offline", "the auth mode is not one of " + modes.modes.map { "`\($0.rawValue)`" }.joined(separator: ", "))
        case .keystoreNotHardware: return ("keystore not hardware", "the device keystore is not hardware-backed")
        case .biometricLocked: return ("biometric locked", "the biometric path is locked until the next IdP login")
        case let .authModeIs(m): return ("mode \(m.rawValue)", "the auth mode is `\(m.rawValue)`")
        case let .failureLimitReached(p, l):
            return ("\(p.rawValue) failure \(l)", "this is failure \(l) or later on the \(p.rawValue) path")
        case .networkOffline: return ("offline", "the device is offline")
        case let .refreshCause(c): return ("cause \(c.rawValue)", "the refresh failed with cause `\(c.rawValue)`")
        case .unsyncedItems: return ("unsynced items", "the client reports unsynced items")
        case .appNotTrusted: return ("app not trusted", "the app that created the session is not in `cross_app.apps`")
        case let .ruleFactMissing(i):
            return ("rule \(rules[i].name) fact missing", "rule `\(rules[i].name)` needs a fact the event does not report")
        case let .rule(i): return ("rule \(rules[i].name)", "rule `\(rules[i].name)`: \(rules[i].text)")
        case let .switched(kind, inner):
            let (label, sentence) = wording(kind.trigger)
            if inner == .always { return (label, "\(sentence), and the new login passes every check") }
            let next = wording(inner)
            return ("\(label), \(next.label)", "\(sentence), and for the new login: \(next.sentence)")
        }
    }

    /// A short guard label for graphs (`since idp login > 90d`).
    package func label(_ g: Guard) -> String { wording(g).label }

    /// A guard in policy vocabulary.
    package func describe(_ g: Guard) -> String { wording(g).sentence }

    /// The facts a guard looked at, for explanations.
    package func facts(_ g: Guard, _ s: SessionState, _ e: Event) -> String {
        let now = Self.now(s, e)
        func since(_ t: Timestamp?, _ what: String) -> String {
            guard let t else { return "no \(what) recorded" }
            let d = (now - t.millisecondsSinceEpoch) / 1000
            return d >= 0 ? "\(TimeSpan(seconds: d)) since the \(what)" : "the \(what) is \(TimeSpan(seconds: -d)) in the future"
        }
        func show<T: RawRepresentable>(_ v: T?) -> String where T.RawValue == String { v.map { "`\($0.rawValue)`" } ?? "not reported" }
        switch g {
        case .always: return ""
        case .deviceCompromised: return "integrity \(show(e.device.integrity))"
        case .clockRolledBack:
            return "event time \(e.time), highest time seen "
                + (Self.highestSeen(s).map { "\(Timestamp(millisecondsSinceEpoch: $0))" } ?? "none")
        case .differentDevice:
            return "event device \(e.device.id.map { "`\($0)`" } ?? "none"), session device \(s.device.map { "`\($0)`" } ?? "none")"
        case .differentUser: return "event user \(e.user.map { "`\($0)`" } ?? "none"), session user \(s.user.map { "`\($0)`" } ?? "none")"
        case .sessionMaxExceeded: return since(s.lastIdPLogin, "last IdP login")
        case .idleExceeded: return since(s.lastActivity ?? s.lastIdPLogin, "last activity")
        case .offlineWindowExceeded: return since(s.lastOnline ?? s.lastIdPLogin, "last online validation")
        case .authModeMissing, .authModeNeedsIdP, .authModeNotOffline, .authModeIs: return "auth mode \(show(s.authMode))"
        case .keystoreNotHardware: return "keystore \(show(e.device.keystore))"
        case .biometricLocked: return "locked: \(s.biometricLocked), auth mode \(show(s.authMode))"
        case let .failureLimitReached(path, _):
            let n: Int
            switch path {
            case .biometric: n = s.failures.biometric
            case .offlineLogin: n = s.failures.offlineLogin
            case .idpLogin: n = s.failures.idpLogin
            }
            return "this is failure \(n + 1)"
        case .networkOffline: return "network \(show(e.network))"
        case .refreshCause: return "cause \(show(e.cause))"
        case .unsyncedItems: return "unsynced items: \(e.unsyncedItems ?? 0)"
        case .appNotTrusted: return "app \(e.appID.map { "`\($0)`" } ?? "not reported")"
        case let .switched(kind, inner):
            let first = facts(kind.trigger, s, e)
            let highest = Self.highestSeen(s)
            guard holds(kind.trigger, s, e, now: now, highest: highest) else { return first }
            let rest = facts(inner, Self.cleared(highest: highest, locked: s.biometricLocked), e)
            return rest.isEmpty ? first : "\(first); \(rest)"
        case let .ruleFactMissing(i), let .rule(i):
            switch truth(rules[i].condition, s, e, now: now) {
            case .yes: return "holds"
            case .no: return "does not hold"
            case let .unknown(name): return "`\(name)` is not reported"
            }
        }
    }
}
