/// A policy compiled into its state machine, ready to evaluate events: what an app or a server
/// keeps and calls. Evaluation reads only `machine`; `validated` is the policy it came from, for
/// tools (the linter, coverage).
public struct CompiledPolicy: Sendable {
    /// The validated policy the machine was compiled from.
    public let validated: ValidatedPolicy
    /// The machine: everything a decision reads.
    package let machine: StateMachine

    /// Compiles a validated policy. Validation is not repeated: a `ValidatedPolicy` exists only
    /// once the validator accepted it.
    public init(_ validated: ValidatedPolicy) {
        self.validated = validated
        self.machine = Compiler(validated).build()
    }

    /// A policy with a machine other than its compiler's: for tests that seed faults
    /// (`StateMachine.replacingTransitions`).
    package init(_ validated: ValidatedPolicy, machine: StateMachine) {
        self.validated = validated
        self.machine = machine
    }

    /// Validates and compiles a policy built in code. Throws the validator's errors for a policy
    /// that cannot be right (for example `read_only` as `session.on_expired`, which would fail
    /// open), so a policy built in code gets the same checks as one read from a file.
    public init(_ policy: Policy) throws(DiagnosticError) {
        self.init(try PolicyValidator.validated(policy))
    }

    /// The policy as written.
    public var policy: Policy { validated.policy }
    /// The policy's name.
    public var name: String { machine.name }
    /// Whether a server may tell a refused cross-app detection apart from "no session on this
    /// device" (`cross_app.reveal_refusal`; `false` unless the policy says so).
    public var revealsDetectionRefusal: Bool { machine.revealsDetectionRefusal }
}
