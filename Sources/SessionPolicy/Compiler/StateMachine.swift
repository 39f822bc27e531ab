/// The compiled machine: states, events and ordered guarded transitions.
/// An immutable value: compile once, evaluate many times, from any thread.
public struct StateMachine: Sendable {
    /// Every transition, grouped by (state, event) in state then event order, each group in
    /// the order its guards are tried. `transitions[i].id == i`.
    public let transitions: [Transition]
    /// The range of `transitions` for each (state, event) pair, at `state * eventCount + event`.
    let table: [Range<Int>]

    static let eventCount = EventKind.allCases.count

    init(unordered: [Transition]) {
        let grouped = unordered.enumerated().sorted { a, b in
            let ka = a.element.from.ordinal * Self.eventCount + a.element.event.ordinal
            let kb = b.element.from.ordinal * Self.eventCount + b.element.event.ordinal
            return ka != kb ? ka < kb : a.offset < b.offset
        }.map(\.element)
        var list: [Transition] = []
        var table = [Range<Int>](repeating: 0..<0, count: MachineState.allCases.count * Self.eventCount)
        for var t in grouped {
            t.id = list.count
            let key = t.from.ordinal * Self.eventCount + t.event.ordinal
            if table[key].isEmpty { table[key] = list.count..<list.count }
            list.append(t)
            table[key] = table[key].lowerBound..<list.count
        }
        self.transitions = list
        self.table = table
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

    /// Compiles a validated policy. Compilation cannot fail: everything that can be wrong
    /// with a policy is caught when it is loaded.
    public init(_ policy: Policy) {
        self.policy = policy
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
