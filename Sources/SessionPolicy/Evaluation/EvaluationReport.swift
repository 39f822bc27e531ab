/// One evaluation as `policyctl eval --format json` prints it and the server returns it:
/// `{"policy": ..., "outcome": {...}, "decided_by": {...}, "trace": [...]}`.
package struct EvaluationReport: Sendable, Encodable {
    /// The transition that decided, in policy vocabulary.
    package struct DecidedBy: Sendable, Encodable {
        /// The transition's id.
        package var transition: Int
        /// Its guard (`more than 90d since the last IdP login`).
        package var check: String
        /// The levers it came from.
        package var levers: [String]
        /// Where the first of them is written.
        package var location: String?
    }

    /// The policy's name.
    package var policy: String
    /// The decision and the new state.
    package var outcome: Outcome
    /// What decided, if asked for.
    package var decidedBy: DecidedBy?
    /// Every guard tried, if asked for.
    package var trace: [TraceStep]?

    /// A report of `outcome`, naming the deciding transition when `decidedBy` is true.
    package init(policy: CompiledPolicy, outcome: Outcome, decidedBy: Bool, trace: [TraceStep]? = nil) {
        self.policy = policy.name
        self.outcome = outcome
        self.decidedBy =
            decidedBy
            ? policy.transition(of: outcome).map {
                DecidedBy(
                    transition: $0.id, check: policy.machine.describe($0.guard), levers: $0.source.levers,
                    location: $0.source.location?.description)
            } : nil
        self.trace = trace
    }

    enum CodingKeys: String, CodingKey {
        case policy, outcome, trace
        case decidedBy = "decided_by"
    }
}
