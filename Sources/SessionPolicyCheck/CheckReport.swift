public import SessionPolicy

/// Renders the results of `policyctl check`: human text ending with `N passed, N failed`, JSON
/// or JUnit XML, optionally with coverage (levers, guards, transitions).
public struct CheckReport: Sendable {
    public var results: [ScenarioResult]
    public var policies: [String: CompiledPolicy]

    public init(results: [ScenarioResult], policies: [String: CompiledPolicy]) {
        self.results = results
        self.policies = policies
    }

    /// The output formats of `policyctl check`.
    public enum Format: String, Sendable, CaseIterable {
        case human, json, junit
    }

    /// What `check` prints: `stdout` is the report; `stderr` is what would break a machine-readable
    /// report (with JUnit, the summary line and the coverage text).
    public struct Rendered: Sendable, Equatable {
        public var stdout: String
        public var stderr: String
    }

    public var passed: Int { results.filter(\.passed).count }
    public var failed: Int { results.count - passed }
    /// The ids named by scenarios that passed and expect something (one that expects nothing
    /// demonstrates nothing).
    var demonstrated: Set<String> {
        Set(results.filter { $0.passed && $0.scenario.expectsSomething }.flatMap(\.scenario.covers))
    }

    /// The catalogue's behaviour ids (docs/behaviours.md) covered by passing scenarios, in the
    /// catalogue's order.
    public var covered: [String] {
        let ids = demonstrated
        return Behaviours.all.filter(ids.contains)
    }

    /// The user's own ids (any `covers:` id outside the catalogue) covered by passing scenarios, sorted.
    public var requirementsCovered: [String] {
        demonstrated.filter { !Behaviours.isCatalogue($0) }.sorted()
    }

    /// The closing line.
    public var summary: String { "\(passed) passed, \(failed) failed" }

    /// Lever, guard and transition coverage of every policy by these results; `threshold`
    /// applies to `thresholdUnit`; `reachable` and `unexplored` as `CoverageReport` takes them.
    public func coverage(
        threshold: Double? = nil, thresholdUnit: CoverageUnit = .lever, reachable: [String: Set<Int>] = [:],
        unexplored: Set<String> = []
    ) -> CoverageReport {
        CoverageReport(
            results: results, policies: policies, threshold: threshold, thresholdUnit: thresholdUnit, reachable: reachable,
            unexplored: unexplored)
    }

    /// Whether `check` succeeds: no scenario failed and the coverage, if measured, reaches its threshold.
    public func succeeded(coverage: CoverageReport? = nil) -> Bool {
        failed == 0 && coverage?.belowThreshold != true
    }

    /// The output in `format`. `verbose` lists passing scenarios too (human); `coverage` adds the
    /// coverage report, and `coverageDetail` every missed transition in it (human).
    public func render(
        _ format: Format, verbose: Bool = false, coverage: CoverageReport? = nil, coverageDetail: Bool = false
    ) -> Rendered {
        switch format {
        case .human:
            return Rendered(stdout: human(verbose: verbose, coverage: coverage, coverageDetail: coverageDetail), stderr: "")
        case .json:
            // The threshold verdict is in the JSON; it is repeated on standard error for people.
            let line = coverage?.thresholdLine.map { $0 + "\n" } ?? ""
            return Rendered(stdout: json(coverage: coverage), stderr: line)
        case .junit:
            let text = coverage?.human(detail: coverageDetail) ?? ""
            return Rendered(stdout: JUnitReport(results: results).xml(), stderr: text + summary + "\n")
        }
    }

    func title(_ s: Scenario) -> String {
        "\(s.file): \(s.name)" + (s.covers.isEmpty ? "" : " [\(s.covers.joined(separator: ", "))]")
    }

    /// The step, the mismatches, the outcome and the explanation of a failure, indented by two.
    static func details(_ f: StepFailure) -> String {
        var out = "  step \(f.step.number) (\(describe(f.step))), \(f.step.location)\n"
        for m in f.mismatches { out += "    \(m)\n" }
        if let o = f.outcome { out += "    got: \(OutcomeRenderer.summary(o))\n" }
        if !f.trace.isEmpty {
            out += "    explanation:\n"
            out += OutcomeRenderer.trace(f.trace, indent: "      ")
        }
        return out
    }

    /// `launch at 2026-04-14T08:00:00Z`, or `invalid event`.
    static func describe(_ s: Scenario.Step) -> String {
        switch s.event {
        case let .success(e): return "\(e.kind.rawValue) at \(e.time)"
        case .failure: return "invalid event"
        }
    }

    /// Human output. `verbose` lists passing scenarios too; `coverage` is printed before the
    /// closing `N passed, N failed`, which stays the last line.
    public func human(verbose: Bool, coverage: CoverageReport? = nil, coverageDetail: Bool = false) -> String {
        var out = ""
        for r in results {
            if r.passed {
                if verbose { out += "PASS \(title(r.scenario))\n" }
                continue
            }
            out += "FAIL \(title(r.scenario))\n"
            if let f = r.failure { out += Self.details(f) }
        }
        let named = Set(results.flatMap(\.scenario.covers))
        if named.contains(where: Behaviours.isCatalogue) {
            let server = Behaviours.shownByServerTests.filter { !covered.contains($0) }
            let note =
                server.isEmpty
                ? "" : " (\(server.joined(separator: " ")): the server's, shown by its tests, not by scenarios)"
            out += "behaviours covered: \(covered.joined(separator: " "))\(note)\n"
        }
        if named.contains(where: { !Behaviours.isCatalogue($0) }) {
            out += "requirements covered: \(requirementsCovered.joined(separator: " "))\n"
        }
        if let coverage { out += coverage.human(detail: coverageDetail) }
        out += summary + "\n"
        return out
    }

    /// JSON output; with `coverage`, a `coverage` object.
    public func json(coverage: CoverageReport? = nil) -> String {
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
            var requirementsCovered: [String]
            var coverage: CoverageReport.JSON?

            enum CodingKeys: String, CodingKey {
                case scenarios, passed, failed, covered, coverage
                case requirementsCovered = "requirements_covered"
            }
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
        return JSONOutput.string(
            Report(
                scenarios: items, passed: passed, failed: failed, covered: covered, requirementsCovered: requirementsCovered,
                coverage: coverage?.json)) + "\n"
    }
}
