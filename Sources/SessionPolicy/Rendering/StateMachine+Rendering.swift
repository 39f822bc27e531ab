import Foundation

/// Deterministic renderings of a compiled machine: JSON, Graphviz dot and Mermaid.
extension StateMachine {
    /// The state a transition leads to. The resting state is `read_only` from `read_only` and
    /// when the transition makes the session read-only (`license_revoked: read_only`), `active`
    /// otherwise; a read-only session that was suspended rests in `read_only` too, which only
    /// the session state tells (JSON says `active|read_only`).
    package func target(_ t: Transition) -> MachineState {
        switch t.action.target {
        case let .state(s): return s
        case .resting: return t.from == .readOnly || t.action.effects.contains(.setReadOnly) ? .readOnly : .active
        case .unchanged: return t.from
        }
    }

    func targetName(_ t: Transition) -> String { target(t).rawValue }

    func edgeLabel(_ t: Transition) -> String {
        let decision = t.action.decision?.rawValue ?? "no decision"
        return "#\(t.id) \(t.event.rawValue) [\(label(t.guard))] / \(decision) (\(t.action.reason.rawValue))"
    }

    /// Graphviz dot. By default the summary (`MachinePicture`), with edges coloured by decision
    /// and a legend; with `options.full`, one edge per transition in id order. Either keeps only
    /// what `options` focuses on.
    package func renderDot(_ options: PictureOptions = .init()) -> String {
        options.full ? renderFullDot(options) : MachinePicture(self, options: options).renderDot(name: name)
    }

    /// Mermaid `stateDiagram-v2`. By default the summary (`MachinePicture`), each label led by
    /// its decision; with `options.full`, one line per transition in id order. Either keeps only
    /// what `options` focuses on.
    package func renderMermaid(_ options: PictureOptions = .init()) -> String {
        options.full ? renderFullMermaid(options) : MachinePicture(self, options: options).renderMermaid(name: name)
    }

    /// One node per state (with a focus, those its edges touch), one edge per transition.
    func renderFullDot(_ options: PictureOptions) -> String {
        let kept = transitions.filter { options.keeps($0, in: self) }
        var out = "digraph \"\(name)\" {\n  rankdir=LR;\n  node [shape=box, style=rounded];\n"
        for s in states(drawnFor: kept, options) { out += "  \"\(s.rawValue)\";\n" }
        for t in kept {
            let dead = options.isDead(t)
            let label = (edgeLabel(t) + (dead ? " (cannot happen)" : "")).replacingOccurrences(of: "\"", with: "\\\"")
            let grey =
                dead ? ", color=\"\(MachinePicture.deadStyle.color)\", fontcolor=\"\(MachinePicture.deadStyle.color)\", style=dotted" : ""
            out += "  \"\(t.from.rawValue)\" -> \"\(targetName(t))\" [label=\"\(label)\"\(grey)];\n"
        }
        for (i, line) in options.deadNote(self).enumerated() {
            out += "  note\(i) [shape=plaintext, fontsize=9, label=\"\(line)\"];\n"
        }
        return out + "}\n"
    }

    /// One line per transition; with a focus, those it keeps.
    func renderFullMermaid(_ options: PictureOptions) -> String {
        let kept = transitions.filter { options.keeps($0, in: self) }
        var out = "---\ntitle: \(name)\n---\nstateDiagram-v2\n"
        if states(drawnFor: kept, options).contains(.signedOut) { out += "  [*] --> \(MachineState.signedOut.rawValue)\n" }
        for t in kept {
            let label = (edgeLabel(t) + (options.isDead(t) ? " (cannot happen)" : "")).replacingOccurrences(of: ":", with: " ")
                .replacingOccurrences(of: "#", with: "no. ")
            out += "  \(t.from.rawValue) --> \(targetName(t)): \(label)\n"
        }
        let note = options.deadNote(self)
        if !note.isEmpty, states(drawnFor: kept, options).contains(.signedOut) {
            out += "  note left of \(MachineState.signedOut.rawValue)\n"
            for line in note { out += "    \(line.replacingOccurrences(of: ";", with: ","))\n" }
            out += "  end note\n"
        }
        return out
    }

    /// Every state (when reachability is known and dead transitions are left out, those with a
    /// transition drawn, and `signed_out`), or with a focus the states `kept` touches and the
    /// focused one.
    func states(drawnFor kept: [Transition], _ options: PictureOptions) -> [MachineState] {
        if !options.isFocused && options.live != nil && !options.showDead {
            let touched = Set(kept.flatMap { [$0.from, target($0)] })
            return MachineState.allCases.filter { touched.contains($0) || $0 == .signedOut }
        }
        guard options.isFocused else { return MachineState.allCases }
        var touched = Set(kept.flatMap { [$0.from, target($0)] })
        if let s = options.state { touched.insert(s) }
        return MachineState.allCases.filter(touched.contains)
    }

    /// A stable JSON description of the machine.
    package func renderJSON() -> String {
        struct Machine: Encodable {
            var policy: String
            var states: [String]
            var events: [String]
            var transitions: [TransitionSummary]
        }
        let edges = transitions.map { TransitionSummary($0, in: self, withTarget: true) }
        return JSONOutput.string(
            Machine(
                policy: name, states: MachineState.allCases.map(\.rawValue),
                events: EventKind.allCases.map(\.rawValue), transitions: edges)) + "\n"
    }

    /// A human table: per state and event, the guards in the order they are tried.
    package func renderText() -> String {
        var out =
            "policy \(name): \(MachineState.allCases.count) states, \(EventKind.allCases.count) events, \(transitions.count) transitions\n"
        for s in MachineState.allCases {
            out += "\n\(s.rawValue)\n"
            for e in EventKind.allCases {
                let ts = transitions(from: s, on: e)
                guard !ts.isEmpty else { continue }
                out += "  on \(e.rawValue)\n"
                for t in ts {
                    let d = t.action.decision?.rawValue ?? "no decision"
                    let at = t.source.location.map { "  (\($0))" } ?? ""
                    let check = t.guard == .always ? "otherwise" : "if \(describe(t.guard))"
                    out += "    #\(t.id) \(check): \(d), \(t.action.reason.rawValue) -> \(targetName(t))\(at)\n"
                }
            }
        }
        return out
    }
}

/// The JSON form of one transition, shared by `compile --format json` and coverage reports.
package struct TransitionSummary: Encodable, Sendable {
    package var id: Int
    package var from: String
    package var event: String
    package var `guard`: String
    package var decision: String?
    package var reason: String
    /// Where it goes (`active|read_only` for the resting state); only with `withTarget`.
    package var to: String?
    /// Its notices; only with `withTarget`.
    package var notices: Notices?
    package var levers: [String]
    package var location: String?

    /// Describes `t` of `machine`; `withTarget` adds where it goes and its notices.
    package init(_ t: Transition, in machine: StateMachine, withTarget: Bool) {
        id = t.id
        from = t.from.rawValue
        event = t.event.rawValue
        self.guard = machine.describe(t.guard)
        decision = t.action.decision?.rawValue
        reason = t.action.reason.rawValue
        if withTarget {
            if case .resting = t.action.target { to = "active|read_only" } else { to = machine.targetName(t) }
            notices = t.action.notices
        }
        levers = t.source.levers
        location = t.source.location?.description
    }

    enum CodingKeys: String, CodingKey {
        case id, from, event, `guard`, decision, reason, to, notices, levers, location
    }

    package func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(id, forKey: .id)
        try c.encode(from, forKey: .from)
        try c.encode(event, forKey: .event)
        try c.encode(self.guard, forKey: .guard)
        try c.encodeIfPresent(decision, forKey: .decision)
        try c.encode(reason, forKey: .reason)
        try c.encodeIfPresent(to, forKey: .to)
        try c.encodeIfPresent(notices, forKey: .notices)
        try c.encode(levers, forKey: .levers)
        try c.encodeIfPresent(location, forKey: .location)
    }
}
