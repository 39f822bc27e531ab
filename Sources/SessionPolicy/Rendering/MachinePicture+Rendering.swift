/// The summary picture as Graphviz dot and as Mermaid.
extension MachinePicture {
    /// The colour of an edge with `decision`, and its other dot attributes (wipe bold, no
    /// decision dashed).
    static func style(_ decision: Decision?) -> (color: String, attributes: String) {
        switch decision {
        case .allow?: ("#2e7d32", "")
        case .requireBiometric?: ("#1565c0", "")
        case .idpLogin?: ("#e65100", "")
        case .wipe?: ("#c62828", ", penwidth=2")
        case nil: ("#616161", ", style=dashed")
        }
    }

    /// The colour and dot attributes of what cannot happen (`PictureOptions.showDead`).
    static let deadStyle = (color: "#9e9e9e", attributes: ", style=dotted")

    /// The style of `edge`: its decision's, or grey and dotted when it cannot happen.
    static func style(_ edge: Edge) -> (color: String, attributes: String) {
        edge.dead ? deadStyle : style(edge.decision)
    }

    /// The name of a decision in pictures.
    static func word(_ decision: Decision?) -> String { decision?.rawValue ?? "no decision" }

    /// The first line of an edge's label: its decision, marked when it cannot happen.
    static func word(_ edge: Edge) -> String { word(edge.decision) + (edge.dead ? " (cannot happen)" : "") }

    /// `line` broken after commas into pieces of at most `width` characters where it can be
    /// (a piece without a comma is not broken); pieces after the first are indented with two
    /// no-break spaces, which an SVG rendering keeps.
    static func wrap(_ line: String, width: Int = 40) -> [String] {
        var pieces: [String] = []
        var current = ""
        for (i, part) in line.split(separator: ", ", omittingEmptySubsequences: false).enumerated() {
            let chunk = i == 0 ? String(part) : ", " + part
            if !current.isEmpty, current.count + chunk.count > width {
                pieces.append(current + ",")
                current = "\u{A0}\u{A0}" + part
            } else {
                current += chunk
            }
        }
        return pieces + [current]
    }

    /// The lines of each arrow's label: its decision, then its lines, wrapped; or, when they
    /// take more than one line and an earlier arrow to the same state with the same decision has
    /// the same lines, `as from` that arrow's source.
    /// Mermaid breaks no lines itself, nor shows indentation: it gets them unwrapped.
    func arrowLabels(wrapped: Bool) -> [(edge: Edge, lines: [String])] {
        var out: [(edge: Edge, lines: [String])] = []
        for e in arrows {
            let twin = out.first {
                $0.edge.to == e.to && $0.edge.decision == e.decision && $0.edge.dead == e.dead && $0.edge.lines == e.lines
            }
            let body = wrapped ? e.lines.flatMap { Self.wrap($0) } : e.lines
            out.append((e, [Self.word(e)] + (body.count > 1 ? twin.map { ["as from \($0.edge.from.name)"] } ?? body : body)))
        }
        return out
    }

    /// The lines written in a node for its loops: each ends with the loop's decision (and
    /// `(cannot happen)` for a dead loop), with the colour to write it in.
    func stayLines(_ node: Node, wrapped: Bool) -> [(text: String, color: String)] {
        loops(at: node).flatMap { loop in
            loop.lines.flatMap { line in
                let text = line + " / " + Self.word(loop)
                return (wrapped ? Self.wrap(text) : [text]).map { ($0, Self.style(loop).color) }
            }
        }
    }

    // MARK: Graphviz

    /// Graphviz dot, top to bottom from `signed_out`: each state with the events
    /// that stay in it, arrows coloured by decision and labelled with it, and a legend.
    package func renderDot(name: String) -> String {
        func quoted(_ s: String) -> String { "\"" + s.replacingOccurrences(of: "\"", with: "\\\"") + "\"" }
        var out = "digraph \(quoted(name)) {\n"
        out += "  graph [rankdir=TB, fontname=\"Helvetica\", labelloc=b, label=\(quoted(name)), nodesep=0.5, ranksep=0.7];\n"
        out += "  node [shape=box, style=rounded, fontname=\"Helvetica\"];\n"
        out += "  edge [fontname=\"Helvetica\", fontsize=10];\n"
        for n in nodes {
            let stays = stayLines(n, wrapped: true)
            var attributes = n == .any ? ["style=\"rounded,dashed\"", "color=\"#616161\""] : []
            if deadNodes.contains(n) {
                attributes = ["style=\"rounded,dotted\"", "color=\"\(Self.deadStyle.color)\"", "fontcolor=\"\(Self.deadStyle.color)\""]
            }
            if !stays.isEmpty {
                var label = "<table border=\"0\" cellborder=\"0\" cellspacing=\"0\" cellpadding=\"1\">"
                label += "<tr><td>\(Self.html(n.name))</td></tr><hr/>"
                for (text, color) in stays {
                    label +=
                        "<tr><td align=\"left\"><font point-size=\"9\" color=\"\(color)\">\(Self.html(text))</font></td></tr>"
                }
                attributes.append("label=<\(label)</table>>")
            }
            out += "  \(quoted(n.name))" + (attributes.isEmpty ? "" : " [\(attributes.joined(separator: ", "))]") + ";\n"
        }
        // signed_out alone on top, where a session starts and where a wipe leads back to.
        if nodes.contains(.state(.signedOut)) { out += "  { rank=source; \"signed_out\"; }\n" }
        for (e, lines) in arrowLabels(wrapped: true) {
            let (color, more) = Self.style(e)
            let label = lines.map { $0.replacingOccurrences(of: "\"", with: "\\\"") + "\\l" }.joined()
            out +=
                "  \(quoted(e.from.name)) -> \(quoted(e.to.name)) [label=\"\(label)\", color=\"\(color)\", fontcolor=\"\(color)\"\(more)];\n"
        }
        out += "  legend [shape=plain, fontsize=9, label=<<table border=\"0\" cellborder=\"0\" cellspacing=\"1\">"
        for d in [Decision.allow, .requireBiometric, .idpLogin, .wipe] as [Decision?] + [nil] {
            out +=
                "<tr><td align=\"left\"><font color=\"\(Self.style(d).color)\">\(d == .wipe ? "━━" : d == nil ? "- -" : "——") \(Self.word(d))</font></td></tr>"
        }
        out +=
            "<tr><td align=\"left\">\(legendNote.map(Self.html).joined(separator: "<br align=\"left\"/>"))<br align=\"left\"/></td></tr></table>>];\n"
        return out + "}\n"
    }

    /// The legend's explanation of the summary.
    var legendNote: [String] {
        var note = ["one arrow per pair of states and decision", "in a state: the events that stay there"]
        if nodes.contains(.any) {
            note.append("any state: the checks and answers alike in every state they apply in")
            if signedOutStays { note.append("(an idp_login from signed_out stays in signed_out)") }
        }
        return note + deadNote + ["every transition: policyctl compile --format dot --full"]
    }

    /// `text` escaped for a Graphviz HTML label.
    static func html(_ text: String) -> String {
        text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;").replacingOccurrences(
            of: ">", with: "&gt;")
    }

    // MARK: Mermaid

    /// Mermaid `stateDiagram-v2`: the events that stay in a state as its description, arrows
    /// labelled with their decision first, lines joined with `<br>`. Colons, semicolons and `#`
    /// are left out: Mermaid reads them as syntax.
    package func renderMermaid(name: String) -> String {
        func id(_ n: Node) -> String { n == .any ? "any_state" : n.name }
        func clean(_ s: String) -> String {
            s.replacingOccurrences(of: ":", with: " ").replacingOccurrences(of: ";", with: ",").replacingOccurrences(of: "#", with: "no. ")
        }
        var out = "---\ntitle: \(name)\n---\nstateDiagram-v2\n"
        if nodes.contains(.any) { out += "  state \"any state\" as any_state\n" }
        if nodes.contains(.state(.signedOut)) { out += "  [*] --> \(MachineState.signedOut.rawValue)\n" }
        for n in nodes {
            for (text, _) in stayLines(n, wrapped: false) { out += "  \(id(n)) : \(clean(text))\n" }
        }
        for (e, lines) in arrowLabels(wrapped: false) {
            out += "  \(id(e.from)) --> \(id(e.to)): \(lines.map(clean).joined(separator: "<br>"))\n"
        }
        if !deadNodes.isEmpty {
            out += "  classDef dead stroke-dasharray: 3 3, color: \(Self.deadStyle.color), stroke: \(Self.deadStyle.color)\n"
            for n in nodes where deadNodes.contains(n) { out += "  class \(id(n)) dead\n" }
        }
        if !deadNote.isEmpty, nodes.contains(.state(.signedOut)) {
            out += "  note left of \(MachineState.signedOut.rawValue)\n"
            for line in deadNote { out += "    \(clean(line))\n" }
            out += "  end note\n"
        }
        return out
    }
}
