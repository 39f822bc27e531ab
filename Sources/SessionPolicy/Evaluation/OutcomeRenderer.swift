/// The human renderings of an outcome and of a trace: one home, used by `policyctl eval` and
/// `explain` and by the check report's failure details. (The JSON forms are the types' own.)
package enum OutcomeRenderer {
    /// `decision: idp_login, reason session_max_exceeded, next state awaiting_idp, notices ..., scope ...`.
    package static func summary(_ o: Outcome) -> String {
        var line = "decision: \(o.decision?.rawValue ?? "none"), reason \(o.reason), next state \(o.state.state.rawValue)"
        if !o.notices.isEmpty { line += ", notices \(o.notices.names.joined(separator: ", "))" }
        if let s = o.scope { line += ", scope \(s.rawValue)" }
        return line
    }

    /// The next state's fields, one per line after `next state:`, with the JSON key names and
    /// `-` for a field the state does not record, so the times a decision will read are in view.
    package static func state(_ s: SessionState) -> String {
        func t(_ v: Timestamp?) -> String { v.map { "\($0)" } ?? "-" }
        typealias K = SessionState.Field
        var out = "next state: \(s.state.rawValue)\n"
        out += "  \(K.user.key): \(s.user ?? "-"), \(K.device.key): \(s.device ?? "-"), \(K.authMode.key): \(s.authMode?.rawValue ?? "-")\n"
        out += "  \(K.lastIdPLogin.key): \(t(s.lastIdPLogin)), \(K.lastOnline.key): \(t(s.lastOnline))\n"
        out += "  \(K.lastActivity.key): \(t(s.lastActivity)), \(K.highestTime.key): \(t(s.highestTime))\n"
        out += "  failures: biometric \(s.failures.biometric), offline_login \(s.failures.offlineLogin), idp_login \(s.failures.idpLogin)"
        out += "; \(K.readOnly.key): \(s.readOnly), \(K.biometricLocked.key): \(s.biometricLocked)\n"
        return out
    }

    /// Every guard tried, two lines each, the one that decided marked `->`:
    /// ```
    /// -> #12 more than 90d since the last IdP login: 92d since the last IdP login
    ///        decides: session.max, session.on_expired at policies/kobil.yaml:13:8
    /// ```
    /// Each line starts with `indent`.
    package static func trace(_ steps: [TraceStep], indent: String = "") -> String {
        var out = ""
        for step in steps {
            let mark = step.matched ? "->" : "  "
            let facts = step.facts.isEmpty ? "" : ": \(step.facts)"
            let origin = step.levers == ["built-in"] ? "built in" : step.levers.joined(separator: ", ")
            let place = step.location.map { " at \($0)" } ?? ""
            out += "\(indent)\(mark) #\(step.transition) \(step.check)\(facts)\n"
            out += "\(indent)       \(step.matched ? "decides" : "no"): \(origin)\(place)\n"
        }
        return out
    }
}
