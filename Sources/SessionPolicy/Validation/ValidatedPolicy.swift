/// A policy that passed every check of `PolicyValidator`, with each rule's condition parsed and
/// type-checked once. The compiler takes only this: nothing after validation re-parses a
/// condition or re-validates a policy. Only the validator makes one.
public struct ValidatedPolicy: Sendable {
    /// The policy as written.
    public let policy: Policy
    /// The checked condition of each rule, by rule index.
    package let conditions: [Condition]
    /// The validator's warnings (errors never reach a validated policy).
    public let warnings: [Diagnostic]

    init(policy: Policy, conditions: [Condition], warnings: [Diagnostic]) {
        precondition(conditions.count == policy.rules.count, "one checked condition per rule")
        self.policy = policy
        self.conditions = conditions
        self.warnings = warnings
    }
}
