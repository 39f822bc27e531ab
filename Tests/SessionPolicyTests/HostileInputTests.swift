import Foundation
import SessionPolicy
import SessionPolicyTestSupport
import SessionPolicyYAML
import Testing

/// Input built to hurt: each gets a located error, never a crash, a hang or unbounded memory.
@Suite("Hostile input")
struct HostileInputTests {
    func codes(_ text: String) -> [String] {
        switch PolicyFile.compile(text: text, file: "hostile.yaml") {
        case .success: return []
        case let .failure(e): return e.diagnostics.map(\.code.rawValue)
        }
    }

    @Test("a billion-laughs alias bomb is refused at its first anchor")
    func aliasBomb() {
        var text = "version: 1\nname: bomb\nx0: &a0 [lol, lol, lol, lol, lol, lol, lol, lol, lol, lol]\n"
        for i in 1...12 {
            let refs = Array(repeating: "*a\(i - 1)", count: 10).joined(separator: ", ")
            text += "x\(i): &a\(i) [\(refs)]\n"
        }
        let result = PolicyFile.compile(text: text, file: "bomb.yaml")
        guard case let .failure(e) = result else { Issue.record("alias bomb compiled"); return }
        #expect(e.diagnostics.map(\.code.rawValue) == ["yaml-anchor"])
        #expect(e.diagnostics.first?.location == SourceLocation(file: "bomb.yaml", line: 3, column: 5))
    }

    @Test("nesting 10,000 levels deep is refused")
    func deepFlow() {
        let text = String(repeating: "[", count: 10_000) + String(repeating: "]", count: 10_000)
        let c = codes(text)
        #expect(c.count == 1)
        #expect(c.first == "nesting-too-deep" || c.first == "yaml-syntax")
    }

    @Test("block nesting past the limit is refused with its place")
    func deepBlock() {
        var text = "version: 1\nname: deep\n"
        for depth in 0..<100 { text += String(repeating: " ", count: depth * 2) + "k:\n" }
        text += String(repeating: " ", count: 200) + "v\n"
        #expect(codes(text) == ["nesting-too-deep"])
    }

    /// Each shape nested `n` collections deep around `inner`: block mappings, block lists,
    /// explicit keys, flow lists, flow mappings, and block mappings and lists in turn.
    static let shapes: [(name: String, make: @Sendable (Int, String) -> String)] = [
        (
            "block mappings",
            { n, inner in
                (0..<n).map { String(repeating: "  ", count: $0) + "k:\n" }.joined() + String(repeating: "  ", count: n) + inner + "\n"
            }
        ),
        ("block lists", { n, inner in String(repeating: "- ", count: n) + inner + "\n" }),
        ("explicit keys", { n, inner in "? k\n: " + String(repeating: "- ", count: n - 1) + inner + "\n" }),
        ("flow lists", { n, inner in String(repeating: "[", count: n) + inner + String(repeating: "]", count: n) + "\n" }),
        ("flow mappings", { n, inner in String(repeating: "{a: ", count: n) + inner + String(repeating: "}", count: n) + "\n" }),
        (
            "mappings and lists in turn",
            { n, inner in
                (0..<n).map { String(repeating: "  ", count: $0) + ($0 % 2 == 0 ? "k:" : "-") + "\n" }.joined()
                    + String(repeating: "  ", count: n) + inner + "\n"
            }
        ),
    ]

    /// The reader counts the levels itself, as the events arrive, whatever the shape: a value 64
    /// levels deep is read; one 65 levels deep is not.
    @Test("every shape is read to exactly 64 levels and refused at 65", arguments: shapes.indices)
    func nestingEdge(_ index: Int) {
        let (name, make) = Self.shapes[index]
        func code(_ text: String) -> String? {
            switch YAMLSyntax.parse(text, file: "edge.yaml") {
            case .success: return nil
            case let .failure(e): return e.diagnostics.first?.code.rawValue
            }
        }
        #expect(code(make(63, "x")) == nil, "\(name): 63 collections around a value")
        #expect(code(make(63, "[]")) == nil, "\(name): 64 collections, the last empty")
        #expect(code(make(64, "x")) == "nesting-too-deep", "\(name): 64 collections around a value")
        #expect(code(make(64, "[]")) == "nesting-too-deep", "\(name): 65 collections")
    }

    /// Keys that are lists or mappings, and aliases: the reader that built a tree before checking
    /// hashed every mapping key whole and sorted duplicated keys, so such files took seconds to
    /// minutes; now each is refused at its own event. The `fuzz-*` files are what `FuzzScenarios`
    /// found (the slowest took 10 s in a release build, 35 s in a debug build); the alias file
    /// took ten times as long per level (7 levels, 465 bytes: 10 s; 9 levels: about 1,000 s).
    static let slowKeyCases: [(name: String, text: String, code: String, line: Int, column: Int)] = {
        var out: [(String, String, String, Int, Int)] = []
        for name in ["fuzz-mapping-keys-slow", "fuzz-mapping-keys-timeout", "fuzz-explicit-keys-deep"] {
            let url = Fixtures.root.appendingPathComponent("Tests/Fixtures/hostile/\(name).yaml")
            let text = (try? String(contentsOf: url, encoding: .utf8)) ?? ""
            out.append((name, text, "wrong-type", 1, name == "fuzz-explicit-keys-deep" ? 28 : 7))
        }
        var aliases = "x0: &a0 [x, x, x, x, x, x, x, x, x, x]\n"
        // Six levels (10^7 values when expanded): a regression costs seconds here, not hours.
        for i in 1...6 { aliases += "x\(i): &a\(i) [" + Array(repeating: "*a\(i - 1)", count: 10).joined(separator: ", ") + "]\n" }
        out.append(("aliased key", aliases + "? *a6\n: boom\n", "yaml-anchor", 1, 5))
        out.append(("list key", "version: 1\nname: x\n? [a, b]\n: c\n", "wrong-type", 3, 3))
        out.append(("mapping key", "version: 1\nname: x\n{a: b}: c\n", "wrong-type", 3, 1))
        return out
    }()

    @Test("keys that are lists or mappings, and aliases, are refused before a tree is built", arguments: slowKeyCases.indices)
    func slowKeys(_ index: Int) {
        let c = Self.slowKeyCases[index]
        #expect(!c.text.isEmpty, "\(c.name): fixture missing")
        let clock = ContinuousClock()
        let started = clock.now
        let result = YAMLSyntax.parse(c.text, file: "keys.yaml")
        let took = clock.now - started
        guard case let .failure(e) = result else { Issue.record("\(c.name) was read"); return }
        #expect(e.diagnostics.map(\.code.rawValue) == [c.code], "\(c.name): \(e.diagnostics)")
        #expect(e.diagnostics.first?.location == SourceLocation(file: "keys.yaml", line: c.line, column: c.column), "\(c.name)")
        #expect(e.diagnostics.first?.help != nil, "\(c.name): no hint")
        // Generous: the scan takes milliseconds; without it the slowest took 35 s in a debug build.
        #expect(took < .seconds(2), "\(c.name): \(took)")
    }

    @Test("a 100 MB file is refused before it is read")
    func hugeFile() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("huge-\(UUID().uuidString).yaml").path
        #expect(FileManager.default.createFile(atPath: path, contents: nil))
        defer { try? FileManager.default.removeItem(atPath: path) }
        let handle = try #require(FileHandle(forWritingAtPath: path))
        try handle.truncate(atOffset: 100 * 1024 * 1024)
        try handle.close()
        guard case let .failure(e) = PolicyFile.load(path) else { Issue.record("huge file loaded"); return }
        #expect(e.diagnostics.map(\.code.rawValue) == ["input-too-large"])
    }

    @Test("text over the size limit is refused")
    func hugeText() {
        let text = "version: 1\nname: big\ndescription: " + String(repeating: "a", count: YAMLSyntax.maxBytes) + "\n"
        #expect(codes(text) == ["input-too-large"])
    }

    @Test("too many values are refused")
    func manyNodes() {
        let text = "version: 1\nname: many\nx: [" + Array(repeating: "1", count: 150_000).joined(separator: ",") + "]\n"
        #expect(codes(text) == ["too-many-nodes"])
    }

    @Test("invalid UTF-8 is refused with its line and column")
    func invalidUTF8() {
        var bytes = Data("version: 1\nname: caf".utf8)
        bytes.append(contentsOf: [0xC3, 0x28])
        bytes.append(Data("\n".utf8))
        guard case let .failure(e) = YAMLSyntax.parse(bytes, file: "u.yaml") else { Issue.record("accepted"); return }
        #expect(e.diagnostics.map(\.code.rawValue) == ["invalid-utf8"])
        #expect(e.diagnostics.first?.location == SourceLocation(file: "u.yaml", line: 2, column: 10))
    }

    @Test(
        "odd documents get clear errors",
        arguments: [
            ("", "empty-document"), ("# only a comment\n", "empty-document"), ("just a string", "wrong-type"),
            ("- a\n- b\n", "wrong-type"), ("version: 1\nname: a\n---\nversion: 1\nname: b\n", "multiple-documents"),
            ("---\n...\n", "empty-document"),
            ("version: 1\nname: [unclosed\n", "yaml-syntax"), ("version: 1\nname: t\n: no key\n", "yaml-syntax"),
            ("{version: 1, name: t, version: 1}", "duplicate-key"), ("version: 1\nname: \"\"\n", "invalid-value"),
        ])
    func oddDocuments(text: String, code: String) {
        #expect(codes(text).contains(code), "got \(codes(text))")
    }

    @Test("the second of two duplicate keys is the one reported")
    func duplicateSecond() {
        let (text, at) = Markers.extract("version: 1\nname: t\nsession:\n  max: 7d\n  idle: 1d\n  1️⃣max: 9d\n")
        guard case let .failure(e) = PolicyFile.compile(text: text, file: "test.yaml") else { Issue.record("accepted"); return }
        #expect(e.diagnostics.first?.code.rawValue == "duplicate-key")
        #expect(e.diagnostics.first?.location == at["1️⃣"])
        #expect(e.diagnostics.first?.notes == ["first written at test.yaml:4:3"])
    }
}
