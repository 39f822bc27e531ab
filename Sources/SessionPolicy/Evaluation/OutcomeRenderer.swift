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
