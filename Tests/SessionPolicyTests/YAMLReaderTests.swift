import Foundation
import SessionPolicy
import SessionPolicyTestSupport
import SessionPolicyYAML
import Testing

/// The YAML reader's one pass over libyaml's events: each refusal at its own event, in reading
/// order, at the place of the node it concerns; scalars' styles and tags; positions in Unicode
/// scalars.
@Suite("YAML reader")
struct YAMLReaderTests {
    func refusal(_ marked: String) -> (Diagnostic?, [String: SessionPolicy.SourceLocation]) {
        let (text, at) = Markers.extract(marked)
        guard case let .failure(e) = YAMLSyntax.parse(text, file: "test.yaml") else { return (nil, at) }
        #expect(e.diagnostics.count == 1, "\(e.diagnostics)")
        return (e.diagnostics.first, at)
    }

    @Test("a key written twice is reported at the second, with the first in a note, in a small and a large mapping")
    func duplicateKeys() {
        for count in [3, 15, 16, 17, 40] {
            let keys = (0..<count).map { "k\($0): \($0)\n" }.joined()
            let (d, at) = refusal(keys + "1️⃣k\(count - 2): again\n")
            #expect(d?.code == .duplicateKey, "\(count) keys")
            #expect(d?.location == at["1️⃣"], "\(count) keys")
            #expect(d?.message == "key `k\(count - 2)` appears twice in the same mapping")
            #expect(d?.notes == ["first written at test.yaml:\(count - 1):1"], "\(count) keys")
        }
    }

    @Test("a quoted key is the same key as a plain one; keys in other mappings are not compared")
    func duplicateAcrossStyles() {
        let (d, at) = refusal("a:\n  x: 1\nb:\n  x: 2\n1️⃣\"a\": 3\n")
        #expect(d?.code == .duplicateKey)
        #expect(d?.location == at["1️⃣"])
        #expect(d?.notes == ["first written at test.yaml:1:1"])
    }

    @Test("the first problem in reading order is the one reported")
    func readingOrder() {
        // A duplicate key before a syntax error further on, in a mapping that never closes.
        var (d, at) = refusal("a: 1\n1️⃣a: 2\nb: [unclosed\n")
        #expect(d?.code == .duplicateKey)
        #expect(d?.location == at["1️⃣"])
        // A second document before an anchor in it.
        (d, at) = refusal("a: 1\n1️⃣---\nb: &x 1\n")
        #expect(d?.code == .multipleDocuments)
        #expect(d?.location == at["1️⃣"])
        // An alias, where it is written.
        (d, at) = refusal("a: [1, 1️⃣*x]\n")
        #expect(d?.code == .yamlAnchor)
        #expect(d?.location == at["1️⃣"])
    }

    @Test("a value past the 64th level is refused where it starts, a list's or a mapping's or a scalar's")
    func depth() {
        let open = String(repeating: "[", count: 63)
        let close = String(repeating: "]", count: 63)
        let (d, at) = refusal("x: \(open)1️⃣[a]\(close)\n")
        #expect(d?.code == .nestingTooDeep)
        #expect(d?.location == at["1️⃣"])
        let (s, sat) = refusal(String(repeating: "- ", count: 64) + "1️⃣x\n")
        #expect(s?.code == .nestingTooDeep)
        #expect(s?.location == sat["1️⃣"])
    }

    @Test("a syntax error is located at libyaml's problem mark, with its context as a note and a hint")
    func syntaxError() {
        // In a flow list a plain scalar goes on over the line break (`2 b`), so the `:` is where
        // libyaml finds neither `,` nor `]`.
        let (d, at) = refusal("a: [1, 2\nb1️⃣: 3\n")
        #expect(d?.code == .yamlSyntax)
        #expect(d?.message == "invalid YAML: did not find expected ',' or ']'")
        #expect(d?.location == at["1️⃣"])
        #expect(d?.notes == ["while parsing a flow sequence at 1:4"])
        #expect(d?.help == "close the list `[...]` where it is opened, with `, ` between its items")
    }

    @Test("scalars: plain ones keep their type unless tagged `!!str`; keys are text")
    func scalarStyles() throws {
        let text = """
            plain: 12
            single: '12'
            double: "12"
            str: !!str 12
            int: !!int 12
            bang: ! 12
            literal: |
              12
            empty:
            """
        let node = try #require(try YAMLSyntax.parse(text, file: "t.yaml").get())
        func kind(_ key: String) -> SyntaxNode.Kind? { node[key]?.kind }
        #expect(kind("plain") == .scalar("12", isPlain: true))
        #expect(kind("single") == .scalar("12", isPlain: false))
        #expect(kind("double") == .scalar("12", isPlain: false))
        #expect(kind("str") == .scalar("12", isPlain: false))
        #expect(kind("int") == .scalar("12", isPlain: true))
        #expect(kind("bang") == .scalar("12", isPlain: true))
        #expect(kind("literal") == .scalar("12\n", isPlain: false))
        #expect(kind("empty") == .scalar("", isPlain: true))
        #expect(node["empty"]?.isNull == true)
        guard case let .mapping(pairs) = node.kind else { Issue.record("not a mapping"); return }
        #expect(pairs.allSatisfy { !$0.key.isNull && $0.key.kind == .scalar($0.key.scalar ?? "", isPlain: false) })
    }

    @Test("columns count Unicode scalars, after a byte-order mark too")
    func columns() throws {
        for prefix in ["", "\u{FEFF}"] {
            let (text, at) = Markers.extract(prefix + "name: 1️⃣é😀 e\u{301}\nlist: [é, 2️⃣😀, e\u{301}, 3️⃣x]\n")
            let node = try #require(try YAMLSyntax.parse(text, file: "test.yaml").get())
            // The markers count the byte-order mark as a column; the reader does not.
            var name = at["1️⃣"]
            name?.column -= prefix.unicodeScalars.count
            #expect(node["name"]?.location == name)
            guard case let .sequence(items)? = node["list"]?.kind else { Issue.record("no list"); return }
            #expect(items[1].location == at["2️⃣"])
            #expect(items[3].location == at["3️⃣"])
        }
    }

    @Test("odd streams: markers only, a tagged empty document, a second document after `...`")
    func streams() {
        #expect((try? YAMLSyntax.parse("---\n...\n", file: "t.yaml").get()) == .some(nil))
        #expect((try? YAMLSyntax.parse("--- !!str\n", file: "t.yaml").get()) == .some(nil))
        #expect((try? YAMLSyntax.parse("# only\n\n", file: "t.yaml").get()) == .some(nil))
        let (d, at) = refusal("a: 1\n...\n1️⃣---\nb: 2\n")
        #expect(d?.code == .multipleDocuments)
        #expect(d?.location == at["1️⃣"])
    }

    @Test("a byte-order mark that starts a scalar is dropped; one inside it stays")
    func strayByteOrderMark() throws {
        let node = try #require(try YAMLSyntax.parse("a: \u{FEFF}x\nb: y\u{FEFF}z\n", file: "t.yaml").get())
        #expect(node["a"]?.scalar == "x")
        #expect(node["b"]?.scalar == "y\u{FEFF}z")
    }
}
