extension CompiledPolicy {
    /// A guard in policy vocabulary.
    public func describe(_ g: Guard) -> String {
        switch g {
        case .always: return "otherwise"
        case .deviceCompromised: return "the device failed its integrity check"
        case let .clockRolledBack(t): return "the clock went back more than \(t) before the highest time seen"
        case .differentUser: return "the event names another user than the session's"
        case .differentDevice: return "the event comes from another device than the session's"
        case let .sessionMaxExceeded(l): return "more than \(l) since the last IdP login"
        case let .idleExceeded(l): return "more than \(l) since the last activity"
        case let .offlineWindowExpired(l): return "more than \(l) since the last online validation"
        case .authModeMissing: return "the session records no auth mode"
        case .authModeNeedsIdP: return "the auth mode is password or pin"
        case .authModeNotOffline:
            return "the auth mode is not one of " + policy.authModes.offline.map { "`\($0.rawValue)`" }.joined(separator: ", ")
        case .keystoreNotHardware: return "the device keystore is not hardware-backed"
        case .biometricLocked: return "the biometric path is locked until the next IdP login"
        case let .authModeIs(m): return "the auth mode is `\(m.rawValue)`"
        case let .failureLimitReached(path, limit): return "this is failure \(limit) or later on the \(path.rawValue) path"
        case .networkOffline: return "the device is offline"
        case let .refreshCause(c): return "the refresh failed with cause `\(c.rawValue)`"
        case .unsyncedItems: return "the client reports unsynced items"
        case .appNotTrusted: return "the app that created the session is not in `cross_app.apps`"
        case let .ruleFactMissing(i): return "rule `\(policy.rules[i].name)` needs a fact the event does not report"
        case let .rule(i): return "rule `\(policy.rules[i].name)`: \(policy.rules[i].when)"
        case let .switched(kind, inner):
            let switchText = describe(kind.trigger)
            if inner == .always { return "\(switchText), and the new login passes every check" }
            return "\(switchText), and for the new login: \(describe(inner))"
        }
    }

    /// The facts a guard looked at, for explanations.
    public func facts(_ g: Guard, _ s: SessionState, _ e: Event) -> String {
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
        case .offlineWindowExpired: return since(s.lastOnline ?? s.lastIdPLogin, "last online validation")
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
            let rest = facts(inner, Self.cleared(highest: highest), e)
            return rest.isEmpty ? first : "\(first); \(rest)"
        case let .ruleFactMissing(i), let .rule(i):
            switch truth(conditions[i], s, e, now: now) {
            case .yes: return "holds"
            case .no: return "does not hold"
            case let .unknown(name): return "`\(name)` is not reported"
            }
        }
    }
}
