public import SessionPolicy

/// The result of running one scenario.
public struct ScenarioResult: Sendable {
    public var scenario: Scenario
    /// The first failing step, if any.
    public var failure: StepFailure?
    public var passed: Bool { failure == nil }
    /// The transitions the scenario's steps took, for coverage.
    public var transitions: [Int]
}

/// What went wrong in a step: each mismatch, the outcome, and the explanation.
public struct StepFailure: Sendable {
    public var step: Scenario.Step
    /// `field: expected x, got y` lines.
    public var mismatches: [String]
    public var outcome: Outcome?
    public var trace: [TraceStep]
}

/// Runs scenarios against compiled policies. Pure: no I/O.
public enum ScenarioRunner {
    /// Runs `scenario` against `policy`, stopping at the first failing step.
    public static func run(_ scenario: Scenario, against policy: CompiledPolicy) -> ScenarioResult {
        var state = scenario.initial
        var taken: [Int] = []
        for step in scenario.steps {
            switch step.event {
            case let .failure(error):
                let codes = error.diagnostics.map(\.code)
                if let expected = step.expect.error, !codes.contains(expected) {
                    let got = codes.map { "`\($0)`" }.joined(separator: ", ")
                    return ScenarioResult(
                        scenario: scenario,
                        failure: StepFailure(
                            step: step, mismatches: ["error: expected `\(expected)`, got \(got)"], outcome: nil, trace: []),
                        transitions: taken)
                }
                // The engine refused the input: the session state is untouched (fail closed).
                continue
            case let .success(event):
                let (outcome, trace) = policy.explain(state, event)
                taken.append(outcome.transition)
                let mismatches = compare(step.expect, outcome)
                if !mismatches.isEmpty {
                    return ScenarioResult(
                        scenario: scenario,
                        failure: StepFailure(
                            step: step, mismatches: mismatches, outcome: outcome, trace: trace), transitions: taken)
                }
                state = outcome.state
            }
        }
        return ScenarioResult(scenario: scenario, failure: nil, transitions: taken)
    }

    static func show<T>(_ v: T?) -> String where T: RawRepresentable, T.RawValue == String {
        v.map { "`\($0.rawValue)`" } ?? "none"
    }

    /// The differences between what a step expects and what happened.
    public static func compare(_ x: Scenario.Expectation, _ o: Outcome) -> [String] {
        var out: [String] = []
        if let d = x.decision, d != o.decision { out.append("decision: expected \(show(d)), got \(show(o.decision))") }
        if let r = x.reason, r != o.reason { out.append("reason: expected `\(r)`, got `\(o.reason)`") }
        if let m = x.message, m != o.message { out.append("message: expected \"\(m)\", got \"\(o.message)\"") }
        if let s = x.state, s != o.state.state { out.append("state: expected `\(s.rawValue)`, got `\(o.state.state.rawValue)`") }
        if let s = x.scope, s != o.scope { out.append("scope: expected \(show(s)), got \(show(o.scope))") }
        if let m = x.authMode, m != o.authMode { out.append("auth_mode: expected \(show(m)), got \(show(o.authMode))") }
        if let n = x.notices, n != o.notices { out.append("notices: expected \(n), got \(o.notices)") }
        if let d = x.noticeDelay, d != o.noticeDelay {
            out.append("notice_delay: expected `\(d)`, got " + (o.noticeDelay.map { "`\($0)`" } ?? "none"))
        }
        if let u = x.user, u != o.state.user { out.append("user: expected `\(u)`, got " + (o.state.user.map { "`\($0)`" } ?? "none")) }
        if let s = x.session { out += s.mismatches(o.state) }
        return out
    }
}
