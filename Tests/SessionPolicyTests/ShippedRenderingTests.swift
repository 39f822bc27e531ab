import SessionPolicy
import SessionPolicyTestSupport
import Testing

/// The shipped policies' renderings are held by their digests: a change shows as one line per
/// rendering, reviewed on the rendering fixtures' goldens (`policyctl compile` in `CLITests`),
/// while the policies themselves are held by their scenarios, `verify` and the machines'
/// digests. Drawn here as `compile --format FORMAT` draws them (the same calls, the exploration
/// shared with the picture suites, the policy files' paths relative), since every picture
/// explores its policy.
@Suite("Shipped renderings")
struct ShippedRenderingTests {
    @Test("the shipped policies' renderings are the recorded ones, by digest")
    func shippedRenderings() throws {
        var lines: [String] = []
        for path in Fixtures.files(in: "policies") {
            let name = String(path.dropFirst("policies/".count).dropLast(".yaml".count))
            let explored = try #require(Explored.byPath[path], "\(path) does not load")
            let machine = explored.policy.machine
            var picture = PictureOptions()
            picture.live = explored.live
            picture.reachabilityUnknown = explored.live == nil
            let renderings = [
                ("txt", machine.renderText()), ("json", machine.renderJSON()), ("dot", machine.renderDot(picture)),
                ("mmd", machine.renderMermaid(picture)),
            ]
            for (ext, drawn) in renderings {
                // The CLI is given the relative path, and the renderings quote it.
                let text = drawn.replacingOccurrences(of: Fixtures.root.path + "/", with: "")
                lines.append("sha256:\(SHA256.hex(SHA256.hash(Array(text.utf8))))  \(name).\(ext)")
            }
        }
        if let diff = Golden.check(lines.joined(separator: "\n") + "\n", against: "Tests/Fixtures/golden/shipped-renderings.txt") {
            Issue.record(Comment(rawValue: diff))
        }
    }
}
