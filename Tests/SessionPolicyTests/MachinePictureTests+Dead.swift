import SessionPolicy
import SessionPolicyTestSupport
import SessionPolicyVerify
import SessionPolicyYAML
import Testing

/// What the pictures draw when reachability is known: by default only what can happen, the
/// dead transitions counted in the legend; with `showDead`, those too, marked.
extension MachinePictureTests {
    /// The shipped policies and a biometric-only policy whose mode `none` can never get in and
    /// whose sessions can never be read-only.
    static let deadCases = names.map { "policies/\($0).yaml" } + ["Tests/Fixtures/render/biometric-only.yaml"]

    static func load(_ path: String) throws -> (CompiledPolicy, Set<Int>) {
        let explored = try #require(Explored.byPath[path], "\(path) does not load")
        let (policy, live) = (explored.policy, explored.live)
        return (policy, try #require(live, "\(path): reachability unknown"))
    }

    @Test("by default a picture draws no transition verify finds dead, and every one it finds live", arguments: deadCases)
    func noDeadEdge(_ path: String) throws {
        let (policy, live) = try Self.load(path)
        let machine = policy.machine
        #expect(live.count < machine.transitions.count, "\(path) has dead transitions")
        for var options in Self.focuses(machine) {
            options.live = live
            let drawn = MachinePicture(machine, options: options).edges.flatMap(\.transitions)
            #expect(Set(drawn).isSubset(of: live), "\(path) \(options)")
            #expect(MachinePicture(machine, options: options).edges.allSatisfy { !$0.dead })
            let kept = machine.transitions.filter { live.contains($0.id) && options.inFocus($0, in: machine) }
            #expect(Set(drawn) == Set(kept.map(\.id)), "\(path) \(options)")
        }
        // The legend counts what is left out; the full drawing leaves it out too.
        let dead = machine.transitions.count - live.count
        let dot = machine.renderDot(PictureOptions(live: live))
        #expect(dot.contains("\(dead) transitions that cannot happen left out"), "\(path)")
        let full = machine.renderDot(PictureOptions(full: true, live: live))
        #expect(full.components(separatedBy: " -> ").count - 1 == live.count, "\(path)")
        #expect(!full.contains("(cannot happen)"))
    }

    @Test("with showDead every transition is drawn, each dead one on a dead edge", arguments: deadCases)
    func deadDrawnApart(_ path: String) throws {
        let (policy, live) = try Self.load(path)
        let machine = policy.machine
        let picture = MachinePicture(machine, options: PictureOptions(live: live, showDead: true))
        #expect(Set(picture.edges.flatMap(\.transitions)) == Set(machine.transitions.map(\.id)))
        for edge in picture.edges {
            #expect(edge.transitions.allSatisfy { live.contains($0) != edge.dead }, "\(path) \(edge)")
        }
        #expect(machine.renderDot(PictureOptions(live: live, showDead: true)).contains("grey, dotted: "))
        #expect(machine.renderMermaid(PictureOptions(live: live, showDead: true)).contains("(cannot happen)"))
    }

    @Test("a biometric-only policy's picture has no allow for mode none and no read_only state")
    func biometricOnly() throws {
        let (policy, live) = try Self.load("Tests/Fixtures/render/biometric-only.yaml")
        let machine = policy.machine
        let picture = MachinePicture(machine, options: PictureOptions(live: live))
        #expect(!picture.nodes.contains(.state(.readOnly)))
        #expect(picture.edges.filter { $0.decision == .allow }.allSatisfy { !$0.lines.joined().contains("mode none") })
        let dot = machine.renderDot(PictureOptions(live: live))
        #expect(!dot.contains("mode none") && !dot.contains("read_only"))
        let mermaid = machine.renderMermaid(PictureOptions(live: live))
        #expect(!mermaid.contains("mode none") && !mermaid.contains("read_only"))
        #expect(mermaid.contains("note left of signed_out"))
        // Without reachability (a library caller that did not seek it) both are drawn, as before.
        let all = machine.renderDot(PictureOptions())
        #expect(all.contains("mode none") && all.contains("read_only"))
        // With it shown, the dead state is grey.
        let shown = MachinePicture(machine, options: PictureOptions(live: live, showDead: true))
        #expect(shown.deadNodes == [.state(.readOnly)])
    }
}
