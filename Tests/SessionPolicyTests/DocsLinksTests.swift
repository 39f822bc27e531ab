import Foundation
import SessionPolicyTestSupport
import Testing

/// The README is the front door and `docs/` the reference: every relative link of either reaches
/// a file of the repository, every `#anchor` a heading of its target (as GitHub names headings),
/// and the README stays short.
@Suite("Documentation links")
struct DocsLinksTests {
    /// The pages whose links are checked: the README and every page of `docs/`.
    static let pages: [String] = ["README.md"] + Fixtures.files(in: "docs", suffix: ".md")

    struct Link: Sendable, CustomStringConvertible {
        var line: Int
        var target: String
        var description: String { "line \(line): (\(target))" }
    }

    /// The lines of `markdown` outside fenced code blocks, each with its number; with
    /// `blankingCode`, inline code spans blanked (a span such as `` `[](P -> <>S)` `` is no link).
    static func prose(_ markdown: String, blankingCode: Bool = true) -> [(Int, String)] {
        var out: [(Int, String)] = []
        var fenced = false
        for (n, line) in markdown.components(separatedBy: "\n").enumerated() {
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            if trimmed.hasPrefix("```") || trimmed.hasPrefix("~~~") {
                fenced.toggle()
                continue
            }
            if fenced { continue }
            out.append((n + 1, blankingCode ? line.replacing(/``.*?``|`[^`]*`/, with: "") : line))
        }
        return out
    }

    /// The targets of the Markdown links and images of `markdown`: `[text](target)`.
    static func links(_ markdown: String) -> [Link] {
        prose(markdown).flatMap { n, line in
            line.matches(of: /\]\(([^)\s]+)(?:\s+"[^"]*")?\)/).map { Link(line: n, target: String($0.1)) }
        }
    }

    /// GitHub's anchor of a heading: its text as rendered (links and images by their text), in
    /// lower case, every character but letters, digits, `-`, `_` and spaces dropped, spaces
    /// made hyphens.
    static func slug(_ heading: String) -> String {
        let text = heading.replacing(/!?\[([^\]]*)\]\([^)]*\)/) { String($0.1) }
        let kept = text.trimmingCharacters(in: .whitespaces).lowercased().filter {
            $0.isLetter || $0.isNumber || $0 == "-" || $0 == "_" || $0 == " "
        }
        return kept.replacingOccurrences(of: " ", with: "-")
    }

    /// The anchors of `markdown`'s ATX headings outside code; a repeated heading's anchor gets
    /// `-1`, `-2`, ... as on GitHub.
    static func anchors(_ markdown: String) -> Set<String> {
        var seen: [String: Int] = [:]
        var out: Set<String> = []
        for (_, line) in prose(markdown, blankingCode: false) {
            guard let m = line.firstMatch(of: /^#{1,6}\s+(.*?)\s*#*\s*$/) else { continue }
            let base = slug(String(m.1))
            let count = seen[base, default: 0]
            seen[base] = count + 1
            out.insert(count == 0 ? base : "\(base)-\(count)")
        }
        return out
    }

    /// Each problem with `page`'s links: a file that does not exist, an anchor no heading has.
    static func problems(of page: String) -> [String] {
        let text = Fixtures.text(page)
        let folder = (page as NSString).deletingLastPathComponent
        var out: [String] = []
        for link in links(text) where link.target.firstMatch(of: /^[a-zA-Z][a-zA-Z0-9+.-]*:/) == nil {
            let parts = link.target.split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false)
            let path = String(parts[0]), anchor = parts.count > 1 ? String(parts[1]) : nil
            let file = path.isEmpty ? page : ((folder as NSString).appendingPathComponent(path) as NSString).standardizingPath
            guard FileManager.default.fileExists(atPath: Fixtures.path(file)) else {
                out.append("\(page):\(link.line): `\(link.target)`: no file `\(file)`")
                continue
            }
            guard let anchor, file.hasSuffix(".md") else { continue }
            if !anchors(Fixtures.text(file)).contains(anchor) {
                out.append("\(page):\(link.line): `\(link.target)`: `\(file)` has no heading whose anchor is `#\(anchor)`")
            }
        }
        return out
    }

    @Test("every relative link of the README and of docs/ reaches a file, and every anchor a heading", arguments: pages)
    func linksResolve(_ page: String) {
        #expect(!Fixtures.text(page).isEmpty, "\(page) is empty or missing")
        for problem in Self.problems(of: page) { Issue.record(Comment(rawValue: problem)) }
    }

    @Test("the pages checked are the README and the whole of docs/, and they link to one another")
    func coverage() {
        #expect(Self.pages.count > 20, "\(Self.pages)")
        let linked = Set(
            Self.links(Fixtures.text("README.md")).compactMap { link -> String? in
                let path = link.target.split(separator: "#").first.map(String.init) ?? ""
                return path.hasPrefix("docs/") && path.hasSuffix(".md") ? path : nil
            })
        for page in Self.pages.dropFirst() where !linked.contains(page) {
            Issue.record("README.md's map of the docs does not link \(page)")
        }
    }

    @Test("the README is a front door of at most 600 lines")
    func readmeLength() {
        let lines = Fixtures.text("README.md").split(separator: "\n", omittingEmptySubsequences: false).count
        #expect(lines > 100 && lines <= 600, "README.md has \(lines) lines; the reference belongs in docs/")
    }

    @Test("anchors follow GitHub's rules: lower case, punctuation dropped, spaces as hyphens, repeats numbered")
    func gitHubAnchors() {
        #expect(Self.slug("The server: `policyctl serve`") == "the-server-policyctl-serve")
        #expect(Self.slug("`policyctl verify`: what a policy can never do") == "policyctl-verify-what-a-policy-can-never-do")
        #expect(Self.slug("Cross-app device sessions (A1-A3)") == "cross-app-device-sessions-a1-a3")
        #expect(
            Self.slug("One machine, every runtime: Android, the JVM and JavaScript")
                == "one-machine-every-runtime-android-the-jvm-and-javascript")
        #expect(Self.slug("3. `now`") == "3-now")
        #expect(Self.slug("The [machine](machine-format.md) format") == "the-machine-format")
        #expect(Self.anchors("# A\n\n```\n# not a heading\n```\n## A\n### b_c: d\n## `code` too\n") == ["a", "a-1", "b_c-d", "code-too"])
        #expect(
            Self.links("[x](a.md#b) `[y](c.md)`\n```\n[z](d.md)\n```\n![p](images/p.svg)\n").map(\.target) == ["a.md#b", "images/p.svg"])
    }
}
