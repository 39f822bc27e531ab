public import SessionPolicy

/// Renders the results of `policyctl check`: human text ending with `N passed, N failed`, or JSON.
public struct CheckReport: Sendable {
    public var results: [ScenarioResult]
    public var policies: [String: CompiledPolicy]

    public init(results: [ScenarioResult], policies: [String: CompiledPolicy]) {
        self.results = results
        self.policies = policies
    }

    public var passed: Int { results.filter(\.passed).count }
    public var failed: Int { results.count - passed }
    /// The behaviour ids covered by passing scenarios, in SPEC order.
    public var covered: [String] {
        let ids = Set(results.filter(\.passed).flatMap(\.scenario.covers))
        return Behaviours.all.filter(ids.contains)
    }

    /// The closing line.
    public var summary: String { "\(passed) passed, \(failed) failed" }

    func title(_ s: Scenario) -> String {
        "\(s.file): \(s.name)" + (s.covers.isEmpty ? "" : " [\(s.covers.joined(separator: ", "))]")
    }

    /// Human output. `verbose` lists passing scenarios too.
    public func human(verbose: Bool) -> String {
        var out = ""
        for r in results {
            if r.passed {
                if verbose { out += "PASS \(title(r.scenario))\n" }
                continue
            }
            out += "FAIL \(title(r.scenario))\n"
            guard let f = r.failure else { continue }
            let s = f.step
            let event: String
            switch s.event {
            case let .success(e): event = "\(e.kind.rawValue) at \(e.time)"
            case .failure: event = "invalid event"
            }
            out += "  step \(s.number) (\(event)), \(s.location)\n"
            for m in f.mismatches { out += "    \(m)\n" }
            if let o = f.outcome {
                out += "    got: \(o.decision?.rawValue ?? "no decision"), \(o.reason) -> \(o.state.state.rawValue)"
                out += o.notices.isEmpty ? "\n" : " notices \(o.notices)\n"
            }
            if !f.trace.isEmpty {
                out += "    explanation:\n"
                for t in f.trace {
                    let mark = t.matched ? "yes" : "no "
                    let facts = t.facts.isEmpty ? "" : " (\(t.facts))"
                    let at = t.location.map { "  \($0)" } ?? "  [\(t.levers.joined(separator: ", "))]"
                    out += "      \(mark) #\(t.transition) \(t.check)\(facts)\(at)\n"
                }
            }
        }
        let total = Set(results.flatMap(\.scenario.covers))
        if !total.isEmpty {
            out += "behaviours covered: \(covered.joined(separator: " "))\n"
        }
        out += summary + "\n"
        return out
    }

    /// JSON output.
    public func json() -> String {
        struct Failure: Encodable {
            var step: Int
            var location: String
            var mismatches: [String]
            var outcome: Outcome?
            var trace: [TraceStep]
        }
        struct Item: Encodable {
            var file: String
            var name: String
            var policy: String
            var covers: [String]
            var passed: Bool
            var failure: Failure?
        }
        struct Report: Encodable {
            var scenarios: [Item]
            var passed: Int
            var failed: Int
            var covered: [String]
        }
        let items = results.map { r in
            Item(
                file: r.scenario.file, name: r.scenario.name, policy: r.scenario.policy, covers: r.scenario.covers, passed: r.passed,
                failure: r.failure.map {
                    Failure(
                        step: $0.step.number, location: $0.step.location.description,
                        mismatches: $0.mismatches, outcome: $0.outcome, trace: $0.trace)
                })
        }
        return JSONOutput.string(Report(scenarios: items, passed: passed, failed: failed, covered: covered)) + "\n"
    }
}
