/// Scenario results as JUnit XML (`policyctl check --format junit`), for CI systems that show
/// test reports: one `testsuite` per scenario file, one `testcase` per scenario (`classname`
/// is the policy, `name` the scenario). A failing scenario has a `failure` whose message is the
/// failing step and its mismatches, and whose text adds the outcome and the explanation.
/// Times are `0`: the output is deterministic.
public struct JUnitReport: Sendable {
    public var results: [ScenarioResult]

    public init(results: [ScenarioResult]) { self.results = results }

    /// The XML document.
    public func xml() -> String {
        var files: [String] = []
        var byFile: [String: [ScenarioResult]] = [:]
        for r in results {
            if byFile[r.scenario.file] == nil { files.append(r.scenario.file) }
            byFile[r.scenario.file, default: []].append(r)
        }
        let failures = results.count(where: { !$0.passed })
        var out = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
        out += "<testsuites name=\"policyctl check\" tests=\"\(results.count)\" failures=\"\(failures)\" errors=\"0\" time=\"0\">\n"
        for file in files {
            let suite = byFile[file]!
            out += "  <testsuite name=\"\(Self.escape(file))\" tests=\"\(suite.count)\""
            out += " failures=\"\(suite.count(where: { !$0.passed }))\" errors=\"0\" skipped=\"0\" time=\"0\">\n"
            for r in suite {
                let s = r.scenario
                out += "    <testcase classname=\"\(Self.escape(s.policy))\" name=\"\(Self.escape(s.name))\" time=\"0\""
                guard let f = r.failure else {
                    out += "/>\n"
                    continue
                }
                let message =
                    "step \(f.step.number) (\(CheckReport.describe(f.step))) at \(f.step.location): "
                    + f.mismatches.joined(separator: "; ")
                out += ">\n      <failure message=\"\(Self.escape(message))\" type=\"mismatch\">"
                out += Self.escape(CheckReport.details(f), attribute: false)
                out += "</failure>\n    </testcase>\n"
            }
            out += "  </testsuite>\n"
        }
        out += "</testsuites>\n"
        return out
    }

    /// Escapes text for XML 1.0: markup characters become entities; in attributes, line breaks
    /// and tabs become character references so they survive; characters XML 1.0 cannot carry
    /// (most control characters) become U+FFFD.
    static func escape(_ s: String, attribute: Bool = true) -> String {
        var out = ""
        out.reserveCapacity(s.utf8.count)
        for u in s.unicodeScalars {
            switch u {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"" where attribute: out += "&quot;"
            case "'" where attribute: out += "&apos;"
            case "\n" where attribute: out += "&#10;"
            case "\r": out += "&#13;"
            case "\t" where attribute: out += "&#9;"
            case "\n", "\t": out.unicodeScalars.append(u)
            case "\u{0}"..."\u{1F}", "\u{FFFE}", "\u{FFFF}": out += "\u{FFFD}"
            default: out.unicodeScalars.append(u)
            }
        }
        return out
    }
}
