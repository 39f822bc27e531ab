import SessionPolicy
import SessionPolicyTestSupport
import Testing

/// The summary picture of `compile --format dot|mermaid`: it stands for every transition it
/// keeps, each once, and draws each where it goes.
@Suite("Machine pictures")
struct MachinePictureTests {
    static let names = Fixtures.files(in: "policies").map { String($0.dropFirst("policies/".count).dropLast(".yaml".count)) }

    /// Focuses tried on every shipped policy: none, each state, a few events, each lever.
    static func focuses(_ machine: StateMachine) -> [PictureOptions] {
        [PictureOptions()] + MachineState.allCases.map { PictureOptions(state: $0) }
            + [EventKind.launch, .idpLoginSucceeded, .logout, .tokenRefreshed].map { PictureOptions(event: $0) }
            + machine.levers.map { PictureOptions(lever: $0) }
            + [PictureOptions(state: .active, event: .launch, lever: "session.max")]
    }

    @Test("a picture stands for every transition its focus keeps, each once", arguments: names)
    func everyTransitionOnce(_ name: String) throws {
        let machine = try Fixtures.policy(name).machine
        for options in Self.focuses(machine) {
            let picture = MachinePicture(machine, options: options)
            let drawn = picture.edges.flatMap(\.transitions)
            #expect(drawn.count == Set(drawn).count, "\(name) \(options)")
            let kept = machine.transitions.filter { t in
                (options.state.map { t.from == $0 || target(t, machine) == $0 } ?? true)
                    && (options.event.map { t.event == $0 } ?? true)
                    && (options.lever.map { t.source.levers.contains($0) } ?? true)
            }
            #expect(Set(drawn) == Set(kept.map(\.id)), "\(name) \(options)")
            if options.lever != nil, options.state == nil {
                #expect(!drawn.isEmpty, "\(name) \(options): a lever of the machine draws something")
            }
        }
    }

    @Test("each edge holds transitions of one decision that go where it goes", arguments: names)
    func edgesAreTrue(_ name: String) throws {
        let machine = try Fixtures.policy(name).machine
        for options in [PictureOptions(), PictureOptions(state: .awaitingIdP), PictureOptions(state: .signedOut)] {
            let picture = MachinePicture(machine, options: options)
            for edge in picture.edges {
                #expect(!edge.lines.isEmpty)
                for id in edge.transitions {
                    let t = machine.transitions[id]
                    #expect(t.action.decision == edge.decision, "\(name) #\(id)")
                    if case let .state(s) = edge.from { #expect(t.from == s, "\(name) #\(id)") }
                    let to = target(t, machine)
                    switch (edge.from, edge.to) {
                    case (.any, .any):
                        #expect(to == t.from, "\(name) #\(id) stays")
                    case let (_, .state(s)):
                        // From `any state` to `awaiting_idp`, an idp_login from signed_out stays there.
                        let staysSignedOut = s == .awaitingIdP && t.from == .signedOut && to == .signedOut
                        #expect(to == s || staysSignedOut, "\(name) #\(id) goes to \(to), drawn to \(s)")
                    default:
                        Issue.record("\(name): an edge to `any state` that does not start there")
                    }
                }
            }
            // The focused state's own transitions are drawn from it, never from `any state`.
            if let s = options.state {
                for edge in picture.edges where edge.from == .any {
                    #expect(edge.transitions.allSatisfy { machine.transitions[$0].from != s }, "\(name)")
                }
            }
        }
    }

    @Test("the summary is small: every shipped policy's picture has at most 24 arrows", arguments: names)
    func small(_ name: String) throws {
        let picture = MachinePicture(try Fixtures.policy(name).machine)
        #expect(picture.arrows.count <= 24, "\(name): \(picture.arrows.count) arrows")
        #expect(picture.nodes.first == .any)
        // The device checks are drawn once, from `any state`.
        let fromAny = picture.arrows.filter { $0.from == .any }.flatMap(\.lines)
        #expect(fromAny.contains("device compromised"), "\(name)")
        #expect(picture.arrows.filter { $0.from != .any }.allSatisfy { !$0.lines.contains("device compromised") }, "\(name)")
    }

    /// Server signals need no facts: from every state, with a plain and a read-only session, the
    /// state the evaluator goes to is the one the renderings draw (a `license_revoked:
    /// read_only` makes an active session read-only: the picture draws an arrow to read_only).
    @Test("the renderings draw a server signal going where the evaluator goes", arguments: names)
    func signalsGoWhereDrawn(_ name: String) throws {
        let policy = try Fixtures.policy(name)
        let t0 = Timestamp.parse("2026-03-01T09:00:00Z")!
        for s in MachineState.allCases {
            for readOnly in [false, s == .readOnly] {
                let session = SessionState(
                    state: s, user: s.hasSession ? "alice" : nil, authMode: s.hasSession ? .biometric : nil,
                    lastIdPLogin: s.hasSession ? t0 : nil, highestTime: t0, readOnly: readOnly)
                for e in EventKind.allCases where e.isServerSignal {
                    let outcome = policy.evaluate(session, Event(e, at: t0.adding(.hours(1))))
                    let t = policy.machine.transitions[outcome.transition]
                    let drawn = policy.machine.target(t)
                    #expect(outcome.state.state == drawn, "\(name): \(s) on \(e), #\(t.id)")
                    #expect(target(t, policy.machine) == policy.machine.target(t))
                }
            }
        }
    }

    /// Where `t` leads: the resting state is `read_only` from `read_only` or when `t` makes the
    /// session read-only, as the evaluator decides.
    func target(_ t: Transition, _ machine: StateMachine) -> MachineState {
        switch t.action.target {
        case let .state(s): return s
        case .resting: return t.from == .readOnly || t.action.effects.contains(.setReadOnly) ? .readOnly : .active
        case .unchanged: return t.from
        }
    }
}
