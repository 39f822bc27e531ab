import Foundation
import SessionPolicy
import SessionPolicyTestSupport
import SessionPolicyYAML
import Testing

/// The strict JSON reader, `JSONSyntax`: the reference for every JSON input. Valid JSON (the
/// accepting cases of JSONTestSuite, written out by hand) is read; invalid JSON is refused with
/// a diagnostic located by a marker; the input limits hold with the YAML front end's codes and
/// messages; and for valid JSON the tree is the one `YAMLSyntax.parse` builds.
@Suite("JSON syntax")
struct JSONSyntaxTests {
    static func parse(_ text: String, limits: InputLimits = .files) -> Result<SyntaxNode?, DiagnosticError> {
        JSONSyntax.parse(Data(text.utf8), file: "t.json", limits: limits)
    }

    static func parse(_ bytes: [UInt8], limits: InputLimits = .files) -> Result<SyntaxNode?, DiagnosticError> {
        JSONSyntax.parse(Data(bytes), file: "t.json", limits: limits)
    }

    /// The one diagnostic a refused text gets.
    static func refusal(_ bytes: [UInt8], limits: InputLimits = .files) -> Diagnostic? {
        guard case let .failure(e) = parse(bytes, limits: limits) else { return nil }
        #expect(e.diagnostics.count == 1)
        return e.diagnostics.first
    }

    // MARK: Accepted

    /// JSONTestSuite's `y_` cases (the ones RFC 8259 requires a parser to accept), and more.
    static let valid: [String] = [
        "[[]   ]", "[\"\"]", "[]", "[\"a\"]", "[false]", "[null, 1, \"1\", {}]", "[null]", "[1\n]", " [1]", "[1,null,null,null,2]",
        "[2] ", "[0e+1]", "[0e1]", "[ 4]", "[-0.000000000000000000000000000000000000000000000000000000000000000000000000000001]\n",
        "[20e1]", "[-0]", "[-123]", "[-1]", "[1E22]", "[1E-2]", "[1E+2]", "[123e45]", "[123.456e78]", "[1e-2]", "[1e+2]",
        "[123]", "[123.456789]", "{\"asd\":\"sdf\", \"dfg\":\"fgh\"}", "{\"asd\":\"sdf\"}", "{\"a\":\"b\",\"c\":\"c\"}",
        "{}", "{\"\":0}", "{\"foo\\u0000bar\": 42}", "{ \"min\": -1.0e+28, \"max\": 1.0e+28 }",
        "{\"x\":[{\"id\": \"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx\"}], \"id\": \"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx\"}",
        "{\"a\":[]}",
        "{\"title\":\"\\u041f\\u043e\\u043b\\u0442\\u043e\\u0440\\u0430 \\u0417\\u0435\\u043c\\u043b\\u0435\\u043a\\u043e\\u043f\\u0430\" }",
        "{\n\"a\": \"b\"\n}", "[\"\\u0060\\u012a\\u12AB\"]", "[\"\\uD801\\udc37\"]", "[\"\\ud83d\\ude39\\ud83d\\udc8d\"]",
        "[\"\\\"\\\\\\/\\b\\f\\n\\r\\t\"]", "[\"\\\\u0000\"]", "[\"\\\"\"]", "[\"a/*b*/c/*d//e\"]", "[\"\\\\a\"]", "[\"\\\\n\"]",
        "[\"\\u0012\"]", "[\"\\uFFFF\"]", "[\"asd\"]", "[\"\\uDBFF\\uDFFF\"]", "[\"new\\u00A0line\"]", "[\"\u{10FFFF}\"]",
        "[\"\u{FFFF}\"]", "[\"\\u0000\"]", "[\"\\u002c\"]", "[\"π\"]", "[\"\u{1BFFF}\"]", "[\"asd \"]", "\" \"", "[\"\\uD834\\uDd1e\"]",
        "[\"\\u0821\"]", "[\"\\u0123\"]", "[\"\u{2028}\"]", "[\"\u{2029}\"]", "[\"\\u0061\\u30af\\u30EA\\u30b9\"]", "[\"new\\u000Aline\"]",
        "[\"\u{7F}\"]", "[\"\\uA66D\"]", "[\"\\u005C\"]", "[\"⍂㈴⍂\"]", "[\"\\uDBFF\\uDFFE\"]", "[\"\\uD83F\\uDFFE\"]",
        "[\"\\u200B\"]", "[\"\\u2064\"]", "[\"\\uFDD0\"]", "[\"\\uFFFE\"]", "[\"\\u0022\"]", "[\"€𝄞\"]", "[\"aa\"]", "false", "42", "-0.1",
        "null", "\"asd\"", "true", "\"\"", "[\"a\"]\n", "[true]", " [] ", "\u{FEFF}{}", "\u{FEFF}\n [1]", "[\"\u{85}\u{80}\u{9F}\"]",
        "\t{\t\"a\"\t:\t1\t}\t", "\r\n{\r\n\"a\"\r\n:\r\n[\r\n]\r\n}\r\n", "{\"a\"\n:\n1}", "[1\r,2]",
    ]

    /// Two spellings of one text are two keys: keys are compared scalar by scalar
    /// (docs/machine-format.md, "String equality"), also past the linear search's 12 keys.
    static let twoSpellings = [
        "{\"\u{E9}\": 1, \"e\u{301}\": 2}", "{\"e\u{327}\u{1AC1}\": 1, \"e\u{1AC1}\u{327}\": 2}", "{\"\u{212A}\": 1, \"K\": 2}",
        "{" + (0..<13).map { "\"k\($0)\": 0, " }.joined() + "\"\u{D55C}\": 1, \"\u{1112}\u{1161}\u{11AB}\": 2}",
    ]

    @Test("valid JSON is read", arguments: valid + twoSpellings)
    func accepted(_ text: String) throws {
        let result = Self.parse(text)
        guard case let .success(node?) = result else {
            Issue.record("refused \(text.debugDescription): \(result)")
            return
        }
        #expect(node.location.line >= 1 && node.location.column >= 1)
    }

    @Test("values: escapes decoded, numbers kept as written, literals plain, keys in order")
    func values() throws {
        let node = try #require(
            try Self.parse(
                #"{"s": "a\"\\\/\b\f\n\r\tz", "u": "\u00e9\ud83d\ude00", "n": -1.50e+03, "t": true, "f": false, "z": null, "e": ""}"#
            )
            .get())
        guard case let .mapping(pairs) = node.kind else {
            Issue.record("not a mapping")
            return
        }
        #expect(pairs.map { $0.key.scalar } == ["s", "u", "n", "t", "f", "z", "e"])
        #expect(pairs.allSatisfy { $0.key.kind == .scalar($0.key.scalar!, isPlain: false) })
        #expect(node["s"]?.kind == .scalar("a\"\\/\u{8}\u{C}\n\r\tz", isPlain: false))
        #expect(node["u"]?.kind == .scalar("é😀", isPlain: false))
        #expect(node["n"]?.kind == .scalar("-1.50e+03", isPlain: true))
        #expect(node["t"]?.kind == .scalar("true", isPlain: true))
        #expect(node["f"]?.kind == .scalar("false", isPlain: true))
        #expect(node["z"]?.isNull == true)
        #expect(node["e"]?.kind == .scalar("", isPlain: false))
        // A raw character and its escape read the same.
        #expect(
            try Self.parse(#"["é\u00e9"]"#).get()?.kind
                == .sequence([SyntaxNode(.scalar("éé", isPlain: false), at: .init(file: "t.json", line: 1, column: 2))]))
    }

    @Test("empty input and whitespace hold no value")
    func empty() throws {
        for text in ["", " ", "\n\t\r\n", "\u{FEFF}", "\u{FEFF} \n"] {
            guard case .success(nil) = Self.parse(text) else {
                Issue.record("\(text.debugDescription)")
                continue
            }
        }
    }

    @Test("locations: line and column of every node, columns in Unicode scalars, every kind of line break")
    func locations() throws {
        let marked = "1️⃣{\"é😀\": 2️⃣\"x\",\n  3️⃣\"k\" :\t4️⃣[5️⃣1, 6️⃣{}],\n7️⃣\"z\": 8️⃣null}"
        let (text, at) = Markers.extract(marked, file: "t.json")
        let node = try #require(try Self.parse(text).get())
        #expect(node.location == at["1️⃣"])
        guard case let .mapping(pairs) = node.kind, pairs.count == 3 else {
            Issue.record("\(node)")
            return
        }
        #expect(pairs[0].value.location == at["2️⃣"])
        #expect(pairs[1].key.location == at["3️⃣"])
        #expect(pairs[1].value.location == at["4️⃣"])
        guard case let .sequence(items) = pairs[1].value.kind else { return }
        #expect(items.map(\.location) == [at["5️⃣"]!, at["6️⃣"]!])
        #expect(pairs[2].key.location == at["7️⃣"])
        #expect(pairs[2].value.location == at["8️⃣"])
        // `\r\n` and a lone `\r` end a line; a byte-order mark takes no column.
        for (text, line, column) in [("[1,\r\n 2]", 2, 2), ("[1,\r 2]", 2, 2), ("\u{FEFF}[1, 2]", 1, 5), ("[\"😀\",\"é\", 2]", 1, 11)] {
            let items = try #require(try Self.parse(text).get())
            guard case let .sequence(list) = items.kind else { continue }
            #expect(list.last?.location == SourceLocation(file: "t.json", line: line, column: column), "\(text.debugDescription)")
        }
    }

    // MARK: Refused

    /// JSONTestSuite's `n_` cases and more: each is refused with `code`, located at the marker.
    static let invalid: [(marked: String, code: String, message: String)] = [
        // Structure.
        ("{\"a\": 11️⃣,}", "invalid-json", "trailing comma before `}`"),
        ("[1, 21️⃣,]", "invalid-json", "trailing comma before `]`"),
        ("[1️⃣,1]", "invalid-json", "expected a JSON value, found `,`"),
        ("[1,1️⃣,2]", "invalid-json", "expected a JSON value, found `,`"),
        ("{1️⃣,}", "invalid-json", "expected a key in double quotes, found `,`"),
        ("{1️⃣'a': 1}", "invalid-json", "expected a key in double quotes, found `'`"),
        ("{1️⃣a: 1}", "invalid-json", "expected a key in double quotes, found `a`"),
        ("{1️⃣1: 1}", "invalid-json", "expected a key in double quotes, found `1`"),
        ("{\"a\" 1️⃣1}", "invalid-json", "expected `:` after the key, found `1`"),
        ("{\"a\"1️⃣=1}", "invalid-json", "expected `:` after the key, found `=`"),
        ("{\"a\": 1 1️⃣\"b\": 2}", "invalid-json", "expected `,` or `}` after a member, found `\"`"),
        ("[1 1️⃣2]", "invalid-json", "expected `,` or `]` after an element, found `2`"),
        ("[\"a\"1️⃣: 1]", "invalid-json", "expected `,` or `]` after an element, found `:`"),
        ("{\"a\":1️⃣}", "invalid-json", "expected a JSON value, found `}`"),
        ("[1]1️⃣]", "invalid-json", "unexpected `]` after the JSON value"),
        ("{}1️⃣x", "invalid-json", "unexpected `x` after the JSON value"),
        ("[1] 1️⃣[2]", "invalid-json", "unexpected `[` after the JSON value"),
        ("1 1️⃣2", "invalid-json", "unexpected `2` after the JSON value"),
        ("[1]\n1️⃣---", "invalid-json", "unexpected `-` after the JSON value"),
        ("{\"a\": 1}1️⃣\u{0}", "invalid-json", "unexpected control character U+0000 after the JSON value"),
        ("[1,\n  21️⃣", "invalid-json", "the JSON ends inside an array"),
        ("{\"a\": [1]1️⃣", "invalid-json", "the JSON ends inside an object"),
        ("{\"a\"1️⃣", "invalid-json", "the JSON ends inside an object"),
        ("{\"a\":1️⃣", "invalid-json", "the JSON ends inside an object"),
        ("{1️⃣", "invalid-json", "the JSON ends inside an object"),
        ("[1️⃣", "invalid-json", "the JSON ends inside an array"),
        // Literals and words that are not JSON.
        ("[1️⃣True]", "invalid-json", "expected a JSON value, found `T`"),
        ("[1️⃣tru]", "invalid-json", "expected `true`"),
        ("[1️⃣nul]", "invalid-json", "expected `null`"),
        ("[1️⃣fals]", "invalid-json", "expected `false`"),
        ("[true1️⃣x]", "invalid-json", "expected `,` or `]` after an element, found `x`"),
        ("[1️⃣NaN]", "invalid-json", "expected a JSON value, found `N`"),
        ("[1️⃣Infinity]", "invalid-json", "expected a JSON value, found `I`"),
        ("[1️⃣'a']", "invalid-json", "expected a JSON value, found `'`"),
        ("1️⃣key: value", "invalid-json", "expected a JSON value, found `k`"),
        ("[1, 1️⃣/* c */ 2]", "invalid-json", "expected a JSON value, found `/`"),
        ("[1] 1️⃣// c", "invalid-json", "unexpected `/` after the JSON value"),
        ("{\"a\": 1}\n1️⃣# c", "invalid-json", "unexpected `#` after the JSON value"),
        ("[1️⃣é]", "invalid-json", "expected a JSON value, found `é`"),
        // Numbers.
        ("[1️⃣01]", "invalid-json", "a number cannot start with 0"),
        ("[-1️⃣00]", "invalid-json", "a number cannot start with 0"),
        ("[-1️⃣]", "invalid-json", "a number needs digits after `-`"),
        ("[-1️⃣a]", "invalid-json", "a number needs digits after `-`"),
        ("[1.1️⃣]", "invalid-json", "a number needs digits after `.`"),
        ("[1.1️⃣e3]", "invalid-json", "a number needs digits after `.`"),
        ("[1e1️⃣]", "invalid-json", "a number needs digits in its exponent"),
        ("[1E+1️⃣]", "invalid-json", "a number needs digits in its exponent"),
        ("[1️⃣+1]", "invalid-json", "expected a JSON value, found `+`"),
        ("[1️⃣.5]", "invalid-json", "expected a JSON value, found `.`"),
        ("[01️⃣x10]", "invalid-json", "expected `,` or `]` after an element, found `x`"),
        ("[1.0e1️⃣.5]", "invalid-json", "a number needs digits in its exponent"),
        ("[-1️⃣ 1]", "invalid-json", "a number needs digits after `-`"),
        // Strings.
        ("[1️⃣\"abc]", "invalid-json", "a string is not closed"),
        ("1️⃣\"abc\\", "invalid-json", "a string is not closed"),
        ("[\"a1️⃣\tb\"]", "invalid-json", "the control character U+0009 must be escaped in a string"),
        ("[\"a1️⃣\u{1}\"]", "invalid-json", "the control character U+0001 must be escaped in a string"),
        ("[\"a1️⃣\u{0}\"]", "invalid-json", "the control character U+0000 must be escaped in a string"),
        ("[\"é1️⃣\nb\"]", "invalid-json", "a line break inside a string"),
        ("[\"a1️⃣\\x\"]", "invalid-json", "unknown escape `\\x`"),
        ("[\"a1️⃣\\'\"]", "invalid-json", "unknown escape `\\'`"),
        ("[\"a1️⃣\\U0041\"]", "invalid-json", "unknown escape `\\U`"),
        ("[\"😀1️⃣\\\u{E9}\"]", "invalid-json", "unknown escape: a backslash followed by `é`"),
        ("[\"1️⃣\\u12\"]", "invalid-json", "`\\u` needs four hexadecimal digits"),
        ("[\"1️⃣\\u12G4\"]", "invalid-json", "`\\u` needs four hexadecimal digits"),
        ("[\"1️⃣\\ud800\"]", "invalid-json", "`\\ud800` is half of a surrogate pair, without its other half"),
        ("[\"1️⃣\\ud800x\"]", "invalid-json", "`\\ud800` is half of a surrogate pair, without its other half"),
        ("[\"1️⃣\\udbff\\u0041\"]", "invalid-json", "`\\udbff` is half of a surrogate pair, without its other half"),
        ("[\"1️⃣\\ud800\\ud800\"]", "invalid-json", "`\\ud800` is half of a surrogate pair, without its other half"),
        ("[\"a1️⃣\\udc00\"]", "invalid-json", "`\\udc00` is half of a surrogate pair, without its other half"),
        ("[\"\\ud8001️⃣\\u12\"]", "invalid-json", "`\\u` needs four hexadecimal digits"),
        // Keys.
        ("{\"a\": 1, 1️⃣\"a\": 2}", "duplicate-key", "key `a` appears twice in the same mapping"),
        ("{\"a\": {\"b\": 1,\n 1️⃣\"b\": 2}}", "duplicate-key", "key `b` appears twice in the same mapping"),
        ("{\"\\u0061\": 1, 1️⃣\"a\": 2}", "duplicate-key", "key `a` appears twice in the same mapping"),
        // The same scalars, once escaped: one key. Two spellings of one text are two keys (below).
        ("{\"\u{E9}\": 1, 1️⃣\"\\u00e9\": 2}", "duplicate-key", "key `\u{E9}` appears twice in the same mapping"),
        (
            "{\"k0\":0,\"k1\":1,\"k2\":2,\"k3\":3,\"k4\":4,\"k5\":5,\"k6\":6,\"k7\":7,\"k8\":8,\"k9\":9,\"k10\":10,\"k11\":11,\"k12\":12,\"k13\":13,1️⃣\"k3\":3}",
            "duplicate-key", "key `k3` appears twice in the same mapping"
        ),
    ]

    @Test("invalid JSON is refused at the marker, with its message and a hint", arguments: invalid)
    func refused(_ marked: String, _ code: String, _ message: String) throws {
        let (text, at) = Markers.extract(marked, file: "t.json")
        let d = try #require(Self.refusal(Array(text.utf8)), "accepted \(text.debugDescription)")
        #expect(d.code.rawValue == code, "\(text.debugDescription): \(d)")
        #expect(d.message == message, "\(text.debugDescription)")
        #expect(d.location == at["1️⃣"], "\(text.debugDescription): \(d.message)")
        #expect(d.help != nil, "\(text.debugDescription)")
    }

    @Test("a duplicate key's note names the first; the end of input inside a container names where it opened")
    func notes() throws {
        let d = try #require(Self.refusal(Array("{\"a\": 1,\n \"a\": 2}".utf8)))
        #expect(d.notes == ["first written at t.json:1:2"])
        let e = try #require(Self.refusal(Array("[1,\n {\"a\": [".utf8)))
        #expect(e.notes == ["the array starts at t.json:2:8"])
        #expect(e.location == SourceLocation(file: "t.json", line: 2, column: 9))
    }

    @Test("invalid UTF-8 is refused at the offending byte, anywhere in the text")
    func invalidUTF8() throws {
        let cases: [([UInt8], Int, Int, Int)] = [
            (Array("[\"a".utf8) + [0xFF] + Array("\"]".utf8), 1, 4, 3),
            (Array("[\"é".utf8) + [0xC3] + Array("\"]".utf8), 1, 4, 4),  // a truncated sequence
            (Array("[\n\"".utf8) + [0xC0, 0x80] + Array("\"]".utf8), 2, 2, 3),  // overlong
            (Array("[\"".utf8) + [0xED, 0xA0, 0x80] + Array("\"]".utf8), 1, 3, 2),  // an encoded surrogate
            (Array("[\"".utf8) + [0xF4, 0x90, 0x80, 0x80] + Array("\"]".utf8), 1, 3, 2),  // above U+10FFFF
            (Array("[".utf8) + [0x80] + Array("]".utf8), 1, 2, 1),  // outside a string
            (Array("{\"a\": 1}".utf8) + [0xFE], 1, 9, 8),  // after the value
        ]
        for (bytes, line, column, offset) in cases {
            let d = try #require(Self.refusal(bytes))
            #expect(d.code == .invalidUTF8, "\(bytes)")
            // The message names the bytes and their offset.
            let named = "0x" + String(bytes[offset], radix: 16, uppercase: true)
            #expect(d.message.contains("\(named)") && d.message.contains("at byte offset \(offset)"), "\(d.message)")
            #expect(d.message.hasSuffix("not valid UTF-8") || d.message.hasSuffix("file?)"), "\(d.message)")
            #expect(d.location == SourceLocation(file: "t.json", line: line, column: column), "\(bytes)")
            #expect(d.help?.hasPrefix("save the file as UTF-8") == true)
            // The YAML front end gives the same diagnostic for the same bytes.
            guard case let .failure(y) = YAMLSyntax.parse(Data(bytes), file: "t.json") else {
                Issue.record("YAML read \(bytes)")
                continue
            }
            #expect(y.diagnostics == [d], "\(bytes)")
        }
    }

    // MARK: Limits

    @Test("the byte limit: exactly at it is read, one byte more is refused as the YAML front end refuses it")
    func byteLimit() throws {
        let limits = InputLimits(bytes: 100, nodes: 1000, depth: 64, hint: "make it smaller")
        let at = Array(("[\"" + String(repeating: "a", count: 96) + "\"]").utf8)
        #expect(at.count == 100)
        #expect(try Self.parse(at, limits: limits).get() != nil)
        let over = Array(("[\"" + String(repeating: "a", count: 97) + "\"]").utf8)
        let d = try #require(Self.refusal(over, limits: limits))
        #expect(d.code == .inputTooLarge)
        #expect(d.message == "input is 101 bytes, more than the limit of 100 bytes")
        #expect(d.help == "make it smaller")
        #expect(d.location == SourceLocation(file: "t.json", line: 1, column: 1))
        guard case let .failure(y) = YAMLSyntax.parse(Data(over), file: "t.json", limits: limits) else {
            Issue.record("YAML read it")
            return
        }
        #expect(y.diagnostics == [d])
    }

    @Test("nesting: the limit's depth is read, one level more is refused where it starts, as YAML does")
    func depthLimit() throws {
        for depth in [1, 2, 10, 64] {
            let limits = InputLimits(bytes: 1 << 20, nodes: 100_000, depth: depth, hint: "")
            // `depth` levels: arrays down to a scalar at the last level.
            let ok = String(repeating: "[", count: depth - 1) + "1" + String(repeating: "]", count: depth - 1)
            #expect(try Self.parse(ok, limits: limits).get() != nil, "\(depth)")
            for over in [
                String(repeating: "[", count: depth) + "1" + String(repeating: "]", count: depth),
                String(repeating: "[", count: depth - 1) + "{\"a\": 1}" + String(repeating: "]", count: depth - 1),
                String(repeating: "[", count: depth + 1) + String(repeating: "]", count: depth + 1),
            ] {
                let d = try #require(Self.refusal(Array(over.utf8), limits: limits), "\(over)")
                #expect(d.code == .nestingTooDeep)
                #expect(d.message == "values are nested more than \(depth) levels deep")
                #expect(d.location?.column == depth + 1, "\(over)")
                guard case let .failure(y) = YAMLSyntax.parse(over, file: "t.json", limits: limits) else {
                    Issue.record("YAML read \(over)")
                    continue
                }
                #expect(y.diagnostics == [d], "\(over)")
            }
        }
    }

    @Test("hundreds of thousands of open brackets are refused quickly, without a crash", .timeLimit(.minutes(1)))
    func deepInput() throws {
        for text in [String(repeating: "[", count: 200_000), String(repeating: "{\"a\":", count: 200_000)] {
            let d = try #require(Self.refusal(Array(text.utf8), limits: InputLimits(bytes: 4 << 20, nodes: .max, depth: .max, hint: "")))
            #expect(d.code == .invalidJSON)
        }
        let d = try #require(Self.refusal(Array(String(repeating: "[", count: 1_000_000).utf8)))
        #expect(d.code == .inputTooLarge || d.code == .nestingTooDeep)
        let e = try #require(Self.refusal(Array(String(repeating: "[", count: 100_000).utf8)))
        #expect(e.code == .nestingTooDeep)
        #expect(e.location == SourceLocation(file: "t.json", line: 1, column: 65))
    }

    @Test("the value budget: every key, value and container counts, as in the YAML front end")
    func nodeLimit() throws {
        // `{"k": [1, 2, ...]}`: the mapping, the key, the list and n items.
        func doc(_ n: Int) -> String { "{\"k\": [" + (0..<n).map(String.init).joined(separator: ", ") + "]}" }
        let limits = InputLimits(bytes: 1 << 20, nodes: 50, depth: 64, hint: "fewer, please")
        #expect(try Self.parse(doc(47), limits: limits).get() != nil)
        let over = doc(48)
        let d = try #require(Self.refusal(Array(over.utf8), limits: limits))
        #expect(d.code == .tooManyNodes)
        #expect(d.message == "the document has more than 50 values")
        #expect(d.help == "fewer, please")
        #expect(d.location?.column == over.count - 3)  // the last item, `47`
        guard case let .failure(y) = YAMLSyntax.parse(over, file: "t.json", limits: limits) else {
            Issue.record("YAML read it")
            return
        }
        #expect(y.diagnostics == [d])
    }

    // MARK: The same tree as the YAML front end

    /// A random JSON document: nested objects and arrays of strings (plain, escaped, non-ASCII),
    /// numbers in every form and literals, with random whitespace between the tokens.
    static func randomDocument(_ random: inout SplitMix) -> String {
        let strings = [
            "", "a", "alice", "a b", "é", "😀", "中文", "a: b", "- x", "#c", "&a", "*a", "!t", "%p", "@x", "{x}", "[x]", "'q'", "x,y",
            "\\\"", "\\\\", "\\/", "\\n", "\\t", "\\r", "\\b", "\\f", "\\u00e9", "\\u0041b", "\\u4e2d", "\\u0000", "\\u001f", " lead",
            "trail ", "2026-03-01T09:00:00Z", "true", "null", "1", "~", "yes", "no", "<<", "=",
        ]
        let numbers = [
            "0", "-0", "1", "-1", "42", "1.5", "-0.25", "1e3", "1E3", "1e+3", "1e-3", "2.5E-10", "123456789012345678901234567890", "0.0",
        ]
        let spaces = ["", "", "", " ", "  ", "\n", "\n  ", "\r\n", " \n "]
        func space() -> String { random.pick(spaces) }
        func value(_ depth: Int) -> String {
            switch depth > 3 ? random.below(3) : random.below(6) {
            case 0: return "\"" + random.pick(strings) + random.pick(strings) + "\""
            case 1: return random.pick(numbers)
            case 2: return random.pick(["true", "false", "null"])
            case 3, 4:
                var used = Set<String>()
                let pairs = (0..<random.below(5)).compactMap { _ -> String? in
                    let key = random.pick(strings) + random.pick(["", "k", "1"])
                    guard used.insert(key).inserted, !key.contains("\\u0000") else { return nil }
                    // libyaml needs a key and its `:` on one line: no line break there.
                    return space() + "\"" + key + "\"" + random.pick(["", " "]) + ":" + space() + value(depth + 1) + space()
                }
                return "{" + pairs.joined(separator: ",") + space() + "}"
            default:
                return "[" + (0..<random.below(5)).map { _ in space() + value(depth + 1) + space() }.joined(separator: ",") + "]"
            }
        }
        return space() + (random.below(4) == 0 ? value(3) : value(0)) + space()
    }

    /// Both must read a document to the same tree, or refuse it with the same code (the random
    /// documents may repeat a key, written once escaped and once not).
    static func compare(_ texts: [String]) -> (same: Int, differ: [String], yamlRefused: [String]) {
        var same = 0
        var differ: [String] = []
        var yamlRefused: [String] = []
        for text in texts {
            let json = JSONSyntax.parse(Data(text.utf8), file: "d.json")
            let yaml = YAMLSyntax.parse(Data(text.utf8), file: "d.json")
            switch (json, yaml) {
            case let (.success(j), .success(y)):
                if j == y { same += 1 } else { differ.append(text) }
            case (.success, .failure):
                yamlRefused.append(text)
            case let (.failure(j), .failure(y)):
                if j.diagnostics.map(\.code) != y.diagnostics.map(\.code) { differ.append(text) }
            case (.failure, .success):
                differ.append(text)
            }
        }
        return (same, differ, yamlRefused)
    }

    @Test("for valid JSON the tree is the one YAMLSyntax.parse builds: the test suite's cases, the shipped shapes, random documents")
    func sameTreeAsYAML() throws {
        // The shipped states and events in every JSONEncoder format.
        var texts: [String] = []
        let corpus = FastJSONTests.corpus
        for format in FastJSONTests.formats {
            for state in corpus.states.prefix(60) { texts.append(String(decoding: FastJSONTests.json(state, format), as: UTF8.self)) }
            for event in corpus.events.prefix(60) { texts.append(String(decoding: FastJSONTests.json(event, format), as: UTF8.self)) }
        }
        var random = SplitMix(seed: 2026)
        texts += (0..<3000).map { _ in Self.randomDocument(&random) }
        let yamlReads = Self.valid.filter { text in
            // The cases where libyaml reads JSON differently or not at all (see `yamlDiffers`).
            !Self.yamlDiffers.contains(text)
        }
        texts += yamlReads
        let (same, differ, yamlRefused) = Self.compare(texts)
        #expect(differ.isEmpty, "\(differ.count) differ, first: \(differ.prefix(3).map(\.debugDescription))")
        #expect(yamlRefused.isEmpty, "YAML refused \(yamlRefused.count), first: \(yamlRefused.prefix(3).map(\.debugDescription))")
        #expect(same >= 3400, "\(same)")
    }

    /// Valid JSON that libyaml reads differently or refuses: why JSON needs its own reader.
    static let yamlDiffers: [String] = [
        "[\"\\uD801\\udc37\"]", "[\"\\ud83d\\ude39\\ud83d\\udc8d\"]", "[\"\\uDBFF\\uDFFF\"]", "[\"\\uD834\\uDd1e\"]",
        "[\"\\uDBFF\\uDFFE\"]", "[\"\\uD83F\\uDFFE\"]",  // surrogate pairs: libyaml refuses them
        "[\"\u{85}\u{80}\u{9F}\"]",  // C1 controls, one of them a line break to YAML
        "[\"\u{7F}\"]", "[\"\u{FFFF}\"]",  // not printable to YAML
        "\t{\t\"a\"\t:\t1\t}\t",  // tabs outside the brackets
        "{\"a\"\n:\n1}", "\r\n{\r\n\"a\"\r\n:\r\n[\r\n]\r\n}\r\n",  // a key split from its `:`
    ]

    // The YAML front end (policies, scenarios) refuses two spellings of one key as one key twice.
    @Test("the valid JSON libyaml reads differently or refuses", arguments: yamlDiffers + twoSpellings)
    func yamlDiffersFromJSON(_ text: String) throws {
        #expect(try Self.parse(text).get() != nil)
        if case let .success(y?) = YAMLSyntax.parse(Data(text.utf8), file: "t.json") {
            #expect(y != (try Self.parse(text).get()), "YAML reads \(text.debugDescription) the same now: move it back")
        }
    }

    @Test("the YAML front end accepts what JSON refuses: trailing commas, single quotes, comments")
    func yamlIsWider() {
        for text in ["{\"a\": 1,}", "['a']", "{\"a\": 1} # c", "{a: 1}", "[1]\n---\n"] {
            guard case .failure = Self.parse(text) else {
                Issue.record("JSON read \(text.debugDescription)")
                continue
            }
            if case .failure = YAMLSyntax.parse(text, file: "t.json") {
                if text != "[1]\n---\n" { Issue.record("YAML refused \(text.debugDescription)") }
            }
        }
    }
}
