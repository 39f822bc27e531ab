/// The compiled machine: states, events and ordered guarded transitions, and everything their
/// guards and actions read (rule conditions, declared attributes, trusted apps, the scope table).
/// Self-contained: evaluating an event reads only the machine, the session state and the event,
/// never the policy it was compiled from. An immutable value: compile once, evaluate many
/// times, from any thread.
package struct StateMachine: Sendable {
    /// The policy's name.
    package let name: String
    /// What the policy is for.
    package let description: String?
    /// Every transition, grouped by (state, event) in state then event order, each group in
    /// the order its guards are tried. `transitions[i].id == i`.
    package let transitions: [Transition]
    /// The custom rules, by index: what `Guard.rule(i)` and `Guard.ruleFactMissing(i)` read.
    package let rules: [CompiledRule]
    /// The attributes events may report, with their types; any other attribute is refused.
    package let attributes: [AttributeDeclaration]
    /// The apps whose device sessions may be adopted (`Guard.appNotTrusted`).
    package let trustedApps: [String]
    /// Whether a refused detection may be told apart from "no session" (`cross_app.reveal_refusal`).
    package let revealsDetectionRefusal: Bool
    /// The OAuth scope of an offline login, by auth mode and keystore.
    package let scopes: ScopeTable
    /// Where each lever was written in the policy file (`session.max` -> its value's location).
    package let sources: [String: SourceLocation]

    /// The range of `transitions` for each (state, event) pair, at `state * eventCount + event`.
    let table: [Range<Int>]
    /// `transitions[i].guard`, kept apart so the hot path reads guards without copying transitions.
    let guards: [Guard]
    /// `transitions[i].action`, kept apart likewise: the hot path reads the matching action's fields in place.
    let actions: [Action]

    static let eventCount = EventKind.allCases.count

    init(
        name: String, description: String?, unordered: [Transition], rules: [CompiledRule],
        attributes: [AttributeDeclaration], trustedApps: [String], revealsDetectionRefusal: Bool, scopes: ScopeTable,
        sources: [String: SourceLocation]
    ) {
        self.name = name
        self.description = description
        self.rules = rules
        self.attributes = attributes
        self.trustedApps = trustedApps
        self.revealsDetectionRefusal = revealsDetectionRefusal
        self.scopes = scopes
        self.sources = sources
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
        self.actions = list.map(\.action)
        self.table = table
    }

    /// The range of `transitions` tried, in order, for `event` in `state`.
    @inline(__always) package func range(from state: MachineState, on event: EventKind) -> Range<Int> {
        table[state.ordinal * Self.eventCount + event.ordinal]
    }

    /// The transitions tried, in order, for `event` in `state`.
    package func transitions(from state: MachineState, on event: EventKind) -> ArraySlice<Transition> {
        transitions[table[state.ordinal * Self.eventCount + event.ordinal]]
    }

    /// The states, in stable order.
    package var states: [MachineState] { MachineState.allCases }
    /// The events, in stable order.
    package var events: [EventKind] { EventKind.allCases }
}

/// A custom rule as the machine keeps it: its name, the events it applies to, and its condition
/// checked into an expression tree (with the text it was written as, for explanations).
package struct CompiledRule: Sendable, Equatable {
    /// The rule's name.
    package let name: String
    /// The events the rule applies to.
    package let on: [EventKind]
    /// The checked condition the evaluator reads.
    package let condition: Condition
    /// The condition as the policy wrote it.
    package let text: String
}

/// The OAuth scope an offline login names (seed 000), by auth mode and keystore: computed once
/// from `offline.credential` when the policy is compiled.
package struct ScopeTable: Sendable, Hashable {
    /// Auth mode `none`, any keystore but hardware.
    package let unprotected: Scope
    /// Auth mode `none`, a hardware keystore.
    package let unprotectedHardware: Scope
    /// Auth mode `biometric`, any keystore but hardware.
    package let biometric: Scope
    /// Auth mode `biometric`, a hardware keystore.
    package let biometricHardware: Scope

    /// A table as a machine document gives it.
    package init(unprotected: Scope, unprotectedHardware: Scope, biometric: Scope, biometricHardware: Scope) {
        (self.unprotected, self.unprotectedHardware) = (unprotected, unprotectedHardware)
        (self.biometric, self.biometricHardware) = (biometric, biometricHardware)
    }

    /// The table for an offline credential: an offline token names `*_offline`, a signed JWT
    /// names `*_grant`, `_SE` when a biometric login's key is in hardware.
    package init(credential: OfflineCredential) {
        switch credential {
        case .offlineToken:
            (unprotected, unprotectedHardware) = (.noAuthOffline, .noAuthOffline)
            (biometric, biometricHardware) = (.bioAuthOffline, .bioAuthOffline)
        case .signedJWT:
            (unprotected, unprotectedHardware) = (.noAuthGrant, .noAuthGrant)
            (biometric, biometricHardware) = (.bioAuthGrant, .bioAuthGrantSE)
        }
    }

    /// The scope for a session's auth mode and the device's keystore.
    @inline(__always) package func scope(for mode: AuthMode?, keystore: Keystore?) -> Scope {
        let hardware = keystore == .hardware
        if mode == .biometric { return hardware ? biometricHardware : biometric }
        return hardware ? unprotectedHardware : unprotected
    }
}

/// A set of auth modes, as a guard parameter (`Guard.authModeNotOffline`).
package struct AuthModeSet: OptionSet, Sendable, Hashable {
    package var rawValue: UInt8
    package init(rawValue: UInt8) { self.rawValue = rawValue }
    /// The set of `modes`.
    package init(_ modes: some Sequence<AuthMode>) {
        self.init(rawValue: 0)
        for m in modes { insert(AuthModeSet(rawValue: m.bit)) }
    }
    /// Whether `mode` is in the set.
    @inline(__always) package func contains(_ mode: AuthMode) -> Bool { rawValue & mode.bit != 0 }
    /// The modes in the set, in declaration order.
    package var modes: [AuthMode] { AuthMode.allCases.filter { contains($0) } }
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

extension StateMachine {
    /// The same machine with `change` applied to its transitions (regrouped and renumbered as
    /// the compiler's are): how tests seed a fault the language itself forbids, to show that
    /// `policyctl verify` and the scenarios catch it.
    package func replacingTransitions(_ change: (inout [Transition]) -> Void) -> StateMachine {
        var list = transitions
        change(&list)
        return StateMachine(
            name: name, description: description, unordered: list, rules: rules, attributes: attributes, trustedApps: trustedApps,
            revealsDetectionRefusal: revealsDetectionRefusal, scopes: scopes, sources: sources)
    }
}

extension StateMachine {
    /// A short digest of the machine (FNV-1a, 64 bits, over `renderJSON()`): what decides, not
    /// how the policy file was written. Generated files record it to tell when they are stale;
    /// it is no security measure.
    package var fingerprint: String {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in renderJSON().utf8 {
            hash ^= UInt64(byte)
            hash = hash &* 0x0000_0100_0000_01b3
        }
        let hex = String(hash, radix: 16)
        return String(repeating: "0", count: 16 - hex.count) + hex
    }
}
