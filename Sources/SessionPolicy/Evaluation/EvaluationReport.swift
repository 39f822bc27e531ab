/// One evaluation as `policyctl eval --format json` prints it and the server returns it:
/// `{"policy": ..., "outcome": {...}, "decided_by": {...}, "trace": [...]}`.
public struct EvaluationReport: Sendable, Encodable {
    /// The transition that decided, in policy vocabulary.
    public struct DecidedBy: Sendable, Encodable {
        /// The transition's id.
        public var transition: Int
        /// Its guard (`more than 90d since the last IdP login`).
        public var check: String
        /// The levers it came from.
        public var levers: [String]
        /// Where the first of them is written.
        public var location: String?
    }

    /// The policy's name.
    public var policy: String
    /// The decision and the new state.
    public var outcome: Outcome
    /// What decided, if asked for.
    public var decidedBy: DecidedBy?
    /// Every guard tried, if asked for.
    public var trace: [TraceStep]?

    /// A report of `outcome`, naming the deciding transition when `decidedBy` is true.
    public init(policy: CompiledPolicy, outcome: Outcome, decidedBy: Bool, trace: [TraceStep]? = nil) {
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

    /// The JSON keys.
    enum CodingKeys: String, CodingKey {
        case policy, outcome, trace
        case decidedBy = "decided_by"
    }
}
