public import Foundation

/// A compiled machine read from its portable document (`sessionpolicy-machine/1`,
/// docs/machine-format.md), without the policy file or YAML: what an app ships or is delivered,
/// and what the Java and JavaScript runtimes load too. Decides exactly as the `CompiledPolicy`
/// it was written from. An immutable value: load once, evaluate many times, from any thread.
public struct PolicyMachine: Sendable {
    package let machine: StateMachine
    /// `sha256:` and the hex SHA-256 of the canonical document without its `digest`.
    public let digest: String
    /// The policy file's name the document's locations refer to, as the document says.
    let source: String?

    /// Reads a machine document. Throws located diagnostics (`file` names the document in
    /// them) for a document that is not JSON, of another format (`unsupported-format`), whose
    /// digest does not match its content (`digest-mismatch`), or that this engine cannot run as
    /// written (`inconsistent-machine`, `unknown-key`, `missing-key`, `wrong-type`, `invalid-value`).
    public init(document: Data, file: String = "machine.json") throws(DiagnosticError) {
        switch MachineDocument.read(document, file: file) {
        case let .success((m, d, s)):
            machine = m
            digest = d
            source = s
        case let .failure(e): throw e
        }
    }

    package init(_ machine: StateMachine, digest: String, source: String?) {
        self.machine = machine
        self.digest = digest
        self.source = source
    }

    /// The policy's name.
    public var name: String { machine.name }
    /// What the policy is for.
    public var description: String? { machine.description }
    /// Whether a server may tell a refused cross-app detection apart from "no session".
    public var revealsDetectionRefusal: Bool { machine.revealsDetectionRefusal }

    /// Evaluates `event` against `state`: the same outcome as `CompiledPolicy.evaluate(_:_:)`.
    @inline(__always) public func evaluate(_ state: SessionState, _ event: Event) -> Outcome { machine.evaluate(state, event) }

    /// Evaluates and updates `state` in place, as `CompiledPolicy.evaluate(_:_:)` does.
    @inline(__always) public func evaluate(_ state: inout SessionState, _ event: Event) -> Verdict {
        machine.evaluate(&state, event, trace: nil)
    }

    /// Evaluates and also returns every guard tried, in order.
    public func explain(_ state: SessionState, _ event: Event) -> (Outcome, [TraceStep]) { machine.explain(state, event) }

    /// The document, canonical: the bytes a digest is taken of (with `digest` added).
    public var document: String { MachineDocument.value(of: machine, source: source).text }

    /// The policy file's name (no folder) a compiled machine's locations refer to.
    static func source(of m: StateMachine) -> String? {
        (m.transitions.lazy.compactMap(\.source.location).first?.file ?? m.sources.values.first?.file)
            .map { ($0 as NSString).lastPathComponent }
    }
}

extension CompiledPolicy {
    /// The compiled machine alone, as it travels (`policyctl compile --format machine`).
    public var portable: PolicyMachine {
        PolicyMachine(machine, digest: MachineDocument.digest(of: documentValue), source: PolicyMachine.source(of: machine))
    }

    /// The machine document of this policy, canonical, with its digest.
    public var machineDocument: String { documentValue.text }

    /// The document, its locations referring to the policy file by name alone.
    private var documentValue: CanonicalJSON {
        MachineDocument.value(of: machine, source: PolicyMachine.source(of: machine))
    }
}
