/// The compiled machine: states, events and ordered guarded transitions.
/// An immutable value: compile once, evaluate many times, from any thread.
public struct StateMachine: Sendable {
    /// Every transition, grouped by (state, event) in state then event order, each group in
    /// the order its guards are tried. `transitions[i].id == i`.
    public let transitions: [Transition]
    /// The range of `transitions` for each (state, event) pair, at `state * eventCount + event`.
    let table: [Range<Int>]

    static let eventCount = EventKind.allCases.count

    /// `transitions[i].guard`, kept apart so the hot path reads guards without copying transitions.
    let guards: [Guard]

    init(unordered: [Transition]) {
        // Group by (state, event) keeping insertion order: a linear bucket pass, not a sort.
        var buckets = [[Transition]](repeating: [], count: MachineState.allCases.count * Self.eventCount)
        for t in unordered { buckets[t.from.ordinal * Self.eventCount + t.event.ordinal].append(t) }
        var list: [Transition] = []
        list.reserveCapacity(unordered.count)
        var table = [Range<Int>](repeating: 0..<0, count: buckets.count)
        for (key, bucket) in buckets.enumerated() {
            let start = list.count
            for var t in bucket {
                t.id = list.count
                list.append(t)
            }
            table[key] = start..<list.count
        }
        self.transitions = list
        self.guards = list.map(\.guard)
        self.table = table
    }

    /// The range of `transitions` tried, in order, for `event` in `state`.
    @inline(__always) func range(from state: MachineState, on event: EventKind) -> Range<Int> {
        table[state.ordinal * Self.eventCount + event.ordinal]
    }

    /// The transitions tried, in order, for `event` in `state`.
    public func transitions(from state: MachineState, on event: EventKind) -> ArraySlice<Transition> {
        transitions[table[state.ordinal * Self.eventCount + event.ordinal]]
    }

    /// The states, in stable order.
    public var states: [MachineState] { MachineState.allCases }
    /// The events, in stable order.
    public var events: [EventKind] { EventKind.allCases }
}

extension MachineState {
    /// Dense index for table lookups.
    @inline(__always) var ordinal: Int {
        switch self {
        case .signedOut: 0
        case .active: 1
        case .suspended: 2
        case .awaitingBiometric: 3
        case .awaitingIdP: 4
        case .readOnly: 5
        }
    }
}

extension EventKind {
    /// Dense index for table lookups.
    @inline(__always) var ordinal: Int {
        switch self {
        case .launch: 0
        case .resume: 1
        case .background: 2
        case .biometricSucceeded: 3
        case .biometricFailed: 4
        case .offlineLoginFailed: 5
        case .idpLoginSucceeded: 6
        case .idpLoginFailed: 7
        case .tokenRefreshed: 8
        case .refreshFailed: 9
        case .accountDeactivated: 10
        case .tokensRevoked: 11
        case .licenseRevoked: 12
        case .biometricEnrollmentChanged: 13
        case .logout: 14
        case .register: 15
        case .deviceSessionDetected: 16
        }
    }
}

/// A policy compiled into its state machine, ready to evaluate events.
public struct CompiledPolicy: Sendable {
    /// The validated policy.
    public let policy: Policy
    /// The machine.
    public let machine: StateMachine
    /// The offline auth modes as a bit set (bit = `AuthMode` ordinal).
    let offlineModes: UInt8
    /// The type-checked condition of each rule, by rule index.
    public let conditions: [Condition]

    /// Validates and compiles a policy. Throws the validator's errors for a policy that cannot be
    /// right (for example `read_only` as `session.on_expired`, which would fail open), so a policy
    /// built in code gets the same checks as one read from a file.
    public init(_ policy: Policy) throws(DiagnosticError) {
        let problems = PolicyValidator.diagnostics(for: policy)
        if problems.hasErrors { throw DiagnosticError(problems) }
        self.policy = policy
        let checker = ConditionChecker(attributes: policy.attributes)
        self.conditions = policy.rules.map { rule in
            // Validated above; a condition that does not check can only be a programmer error.
            (try? ExpressionParser.parse(rule.when).flatMap { checker.check($0) }.get()) ?? .oneOf(.event, [], negated: true)
        }
        self.machine = Compiler(policy: policy).build()
        var modes: UInt8 = 0
        for m in policy.authModes.offline { modes |= m.bit }
        self.offlineModes = modes
    }

    /// The policy's name.
    public var name: String { policy.name }
}

extension AuthMode {
    @inline(__always) var bit: UInt8 {
        switch self {
        case .unprotected: 1
        case .biometric: 2
        case .password: 4
        case .pin: 8
        }
    }
}
