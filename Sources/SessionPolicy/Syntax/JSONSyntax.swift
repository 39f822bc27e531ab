package import Foundation

/// JSON text (RFC 8259, strictly) -> located `SyntaxNode`: the reference reader for every JSON
/// input (request bodies, `policyctl eval` and `explain` inputs, `.json` policy and scenario
/// files). `FastJSON` (`SessionPolicyJSON`) is its fast path and reads the same values and refuses the same inputs.
///
/// The tree is the one the YAML front end builds for the same document: strings (keys too) are
/// quoted scalars holding the decoded text; numbers, `true`, `false` and `null` are plain
/// scalars holding the text as written; objects are mappings and arrays sequences, in document
/// order. Every node carries the 1-based line and column of its first character (the opening
/// quote or bracket), columns counted in Unicode scalars; `\n`, `\r\n` and `\r` end a line.
/// A byte-order mark at the start is skipped (RFC 8259 lets a reader ignore it) and takes no
/// column.
///
/// Refusals are located diagnostics, the first problem in document order: `invalid-json`
/// (syntax: trailing commas and text, bad escapes, lone surrogates, leading zeros, control
/// characters in strings, comments, single quotes, ...), `invalid-utf8`, `duplicate-key` (keys
/// with the same Unicode scalars: not canonical equivalence, docs/machine-format.md), and the bounds of `InputLimits`
/// (`input-too-large`, `nesting-too-deep`, `too-many-nodes`, counted as the YAML front end
/// counts them). The reader keeps its own stack, so no input can exhaust the call stack, and it
/// allocates only the tree it returns (at most one node per value, within the node budget) and
/// one scratch buffer for escaped strings.
package enum JSONSyntax {
    /// Parses the JSON text in `bytes` from `file` within `limits`. Returns the root, nil when the
    /// text holds no value at all (empty, or only whitespace), or diagnostics.
    package static func parse(_ bytes: Data, file: String, limits: InputLimits = .files) -> Result<SyntaxNode?, DiagnosticError> {
        bytes.withUnsafeBytes { parse($0, file: file, limits: limits) }
    }

    /// Parses `text` from `file` within `limits`.
    package static func parse(_ text: String, file: String, limits: InputLimits = .files) -> Result<SyntaxNode?, DiagnosticError> {
        var text = text
        return text.withUTF8 { parse(UnsafeRawBufferPointer($0), file: file, limits: limits) }
    }

    /// Parses the JSON text in `bytes` from `file` within `limits`.
    package static func parse(
        _ bytes: UnsafeRawBufferPointer, file: String, limits: InputLimits = .files
    ) -> Result<
        SyntaxNode?, DiagnosticError
    > {
        if bytes.count > limits.bytes {
            return .failure(
                DiagnosticError([
                    .error(
                        .inputTooLarge, "input is \(bytes.count) bytes, more than the limit of \(limits.bytes) bytes",
                        at: SourceLocation(file: file, line: 1, column: 1), help: limits.hint)
                ]))
        }
        if let problem = TextEncoding.wideEncodingProblem(bytes, file: file) { return .failure(DiagnosticError([problem])) }
        var reader = Reader(bytes: bytes, file: file, limits: limits)
        switch reader.document() {
        case let .success(node): return .success(node)
        case let .failure(problem): return .failure(DiagnosticError([problem.diagnostic]))
        }
    }
}

// MARK: - The reader

extension JSONSyntax {
    /// A problem, thrown internally to unwind to `document()`.
    struct Problem: Error {
        var diagnostic: Diagnostic
    }

    /// An open object or array.
    struct Frame {
        var isObject: Bool
        var location: SourceLocation
        var items: [SyntaxNode] = []
        var pairs: [(key: SyntaxNode, value: SyntaxNode)] = []
        /// The key whose value comes next.
        var key: SyntaxNode?
        /// The keys so far, once an object has enough of them that a linear search is slow.
        var keySet: Set<ExactName>?
    }

    /// What the reader expects next.
    enum Expect {
        case value, key, afterValue
    }

    struct Reader {
        let bytes: UnsafeRawBufferPointer
        let file: String
        let limits: InputLimits
        var index = 0
        /// 1-based line of `index`.
        var line = 1
        /// Offset of the first byte of the line (after a byte-order mark on line 1).
        var lineStart = 0
        /// UTF-8 continuation bytes between `lineStart` and `index` (so that columns count scalars).
        var continuations = 0
        /// Keys, values and containers read so far.
        var nodes = 0
        var stack: [Frame] = []
        /// Reused for strings with escapes.
        var scratch: [UInt8] = []

        /// Objects with more keys than this look duplicates up in a set.
        static let linearKeys = 12

        init(bytes: UnsafeRawBufferPointer, file: String, limits: InputLimits) {
            self.bytes = bytes
            self.file = file
            self.limits = limits
        }

        // MARK: Positions

        var column: Int { index - lineStart - continuations + 1 }

        var location: SourceLocation { SourceLocation(file: file, line: line, column: column) }

        /// The byte at `index`, if any.
        var next: UInt8? { index < bytes.count ? bytes[index] : nil }

        func fail(
            _ code: DiagnosticCode, _ message: String, at location: SourceLocation? = nil, notes: [String] = [], help: String? = nil
        ) -> Problem {
            Problem(diagnostic: .error(code, message, at: location ?? self.location, notes: notes, help: help))
        }

        func syntax(_ message: String, at location: SourceLocation? = nil, notes: [String] = [], help: String? = nil) -> Problem {
            fail(.invalidJSON, message, at: location, notes: notes, help: help)
        }

        /// The input ended inside the innermost open container.
        func endsInside(_ top: Frame) -> Problem {
            let what = top.isObject ? "object" : "array"
            return syntax(
                "the JSON ends inside an \(what)", notes: ["the \(what) starts at \(top.location)"],
                help: "close the \(what) with `\(top.isObject ? "}" : "]")`")
        }

        /// Skips JSON whitespace (space, tab, line feed, carriage return), counting lines.
        mutating func skipSpace() {
            while index < bytes.count {
                switch bytes[index] {
                case 0x20, 0x09:
                    index += 1
                case 0x0A:
                    newLine(after: index)
                case 0x0D:
                    if index + 1 < bytes.count, bytes[index + 1] == 0x0A {
                        newLine(after: index + 1)
                    } else {
                        newLine(after: index)
                    }
                default:
                    return
                }
            }
        }

        mutating func newLine(after breakIndex: Int) {
            index = breakIndex + 1
            line += 1
            lineStart = index
            continuations = 0
        }

        /// How the byte at `index` reads in a message: the character in backticks, or the end.
        func found() throws(Problem) -> String {
            guard index < bytes.count else { return "the end of the input" }
            let b = bytes[index]
            if b >= 0x20, b < 0x7F { return b == UInt8(ascii: "`") ? "a backtick" : "`\(Character(Unicode.Scalar(b)))`" }
            if b < 0x80 { return "control character U+\(hex(UInt32(b)))" }
            let width = try scalarWidth()
            let scalar = String(decoding: UnsafeRawBufferPointer(rebasing: bytes[index..<(index + width)]), as: UTF8.self)
            return "`\(scalar)`"
        }

        // MARK: The document

        mutating func document() -> Result<SyntaxNode?, Problem> {
            do throws(Problem) {
                if bytes.count >= 3, bytes[0] == 0xEF, bytes[1] == 0xBB, bytes[2] == 0xBF {
                    index = 3
                    lineStart = 3
                }
                skipSpace()
                guard index < bytes.count else { return .success(nil) }
                let root = try value()
                skipSpace()
                if index < bytes.count {
                    let what = try found()
                    throw syntax(
                        "unexpected \(what) after the JSON value",
                        help: "a JSON document is one value; remove what follows it, or put the values in a list")
                }
                return .success(root)
            } catch {
                return .failure(error)
            }
        }

        /// Reads one value, with its children, without recursion.
        mutating func value() throws(Problem) -> SyntaxNode {
            var expect = Expect.value
            while true {
                skipSpace()
                switch expect {
                case .value:
                    let node = try startValue()
                    if let node {
                        guard let done = finish(node) else {
                            expect = .afterValue
                            continue
                        }
                        return done
                    }
                    // A container opened: an empty one closes at once.
                    skipSpace()
                    let top = stack[stack.count - 1]
                    if next == UInt8(ascii: top.isObject ? "}" : "]") {
                        index += 1
                        if let done = finish(close()) { return done }
                        expect = .afterValue
                    } else {
                        expect = top.isObject ? .key : .value
                    }
                case .key:
                    try readKey()
                    skipSpace()
                    guard next == UInt8(ascii: ":") else {
                        if index == bytes.count { throw endsInside(stack[stack.count - 1]) }
                        let what = try found()
                        throw syntax("expected `:` after the key, found \(what)", help: "write each member as `\"key\": value`")
                    }
                    index += 1
                    expect = .value
                case .afterValue:
                    let top = stack[stack.count - 1]
                    let closer = UInt8(ascii: top.isObject ? "}" : "]")
                    guard let b = next, b == UInt8(ascii: ",") || b == closer else {
                        if index == bytes.count { throw endsInside(top) }
                        let what = try found()
                        throw syntax(
                            "expected `,` or `\(top.isObject ? "}" : "]")` after \(top.isObject ? "a member" : "an element"), found \(what)",
                            help: top.isObject ? "separate members with `,`" : "separate elements with `,`")
                    }
                    if b == closer {
                        index += 1
                        if let done = finish(close()) { return done }
                        continue
                    }
                    let comma = location
                    index += 1
                    skipSpace()
                    if next == closer {
                        throw syntax(
                            "trailing comma before `\(Character(Unicode.Scalar(closer)))`", at: comma,
                            help: "remove the comma after the last \(top.isObject ? "member" : "element")")
                    }
                    expect = top.isObject ? .key : .value
                }
            }
        }

        /// Counts a node at the current position and checks the depth it would have.
        mutating func count(_ at: SourceLocation) throws(Problem) {
            nodes += 1
            if nodes > limits.nodes {
                throw fail(.tooManyNodes, "the document has more than \(limits.nodes) values", at: at, help: limits.hint)
            }
            if stack.count + 1 > limits.depth {
                throw fail(
                    .nestingTooDeep, "values are nested more than \(limits.depth) levels deep", at: at,
                    help: "policies and scenarios need only a few levels")
            }
        }

        /// Reads a scalar value, or opens a container (and returns nil).
        mutating func startValue() throws(Problem) -> SyntaxNode? {
            guard let b = next else {
                if let top = stack.last { throw endsInside(top) }
                throw syntax("the JSON ends early", help: "give a value after the last `:`")
            }
            let at = location
            try count(at)
            switch b {
            case UInt8(ascii: "{"), UInt8(ascii: "["):
                index += 1
                stack.append(Frame(isObject: b == UInt8(ascii: "{"), location: at))
                return nil
            case UInt8(ascii: "\""):
                return SyntaxNode(.scalar(try string(), isPlain: false), at: at)
            case UInt8(ascii: "t"):
                return try literal("true", at)
            case UInt8(ascii: "f"):
                return try literal("false", at)
            case UInt8(ascii: "n"):
                return try literal("null", at)
            case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
                return try number(at)
            default:
                let what = try found()
                throw syntax("expected a JSON value, found \(what)", help: Self.valueHelp(b))
            }
        }

        static func valueHelp(_ b: UInt8) -> String {
            switch b {
            case UInt8(ascii: "'"): "JSON strings are in double quotes"
            case UInt8(ascii: "T"), UInt8(ascii: "F"), UInt8(ascii: "N"):
                "JSON's literals are `true`, `false` and `null`, in lower case; strings are in double quotes"
            case UInt8(ascii: "+"), UInt8(ascii: "."), UInt8(ascii: "I"):
                "write numbers such as `7`, `-1.5` or `2e3`: no `+`, no leading `.`, no `Infinity` or `NaN`"
            case UInt8(ascii: "/"), UInt8(ascii: "#"): "JSON has no comments"
            case UInt8(ascii: "}"), UInt8(ascii: "]"): "a value is missing before the closing bracket"
            default: "a value is an object `{...}`, an array `[...]`, a string in double quotes, a number, `true`, `false` or `null`"
            }
        }

        /// Adds a finished node to the open container; returns it if it is the root.
        mutating func finish(_ node: SyntaxNode) -> SyntaxNode? {
            guard !stack.isEmpty else { return node }
            let top = stack.count - 1
            if stack[top].isObject {
                let key = stack[top].key!
                stack[top].key = nil
                stack[top].pairs.append((key, node))
            } else {
                stack[top].items.append(node)
            }
            return nil
        }

        /// Closes the innermost container and returns its node.
        mutating func close() -> SyntaxNode {
            let frame = stack.removeLast()
            return SyntaxNode(frame.isObject ? .mapping(frame.pairs) : .sequence(frame.items), at: frame.location)
        }

        /// A key in double quotes, checked against the object's earlier keys.
        mutating func readKey() throws(Problem) {
            guard next == UInt8(ascii: "\"") else {
                if index == bytes.count { throw endsInside(stack[stack.count - 1]) }
                let what = try found()
                throw syntax(
                    "expected a key in double quotes, found \(what)",
                    help: "write each member as `\"key\": value`; keys are in double quotes")
            }
            let at = location
            try count(at)
            let text = try string()
            let key = SyntaxNode(.scalar(text, isPlain: false), at: at)
            let top = stack.count - 1
            if let set = stack[top].keySet {
                if set.contains(ExactName(text)) { throw duplicate(text, at) }
                stack[top].keySet!.insert(ExactName(text))
            } else {
                if stack[top].pairs.contains(where: { $0.key.scalar?.isExactly(text) == true }) { throw duplicate(text, at) }
                if stack[top].pairs.count >= Self.linearKeys {
                    var set = Set(stack[top].pairs.lazy.compactMap { $0.key.scalar.map(ExactName.init) })
                    set.insert(ExactName(text))
                    stack[top].keySet = set
                }
            }
            stack[top].key = key
        }

        func duplicate(_ key: String, _ at: SourceLocation) -> Problem {
            let first = stack[stack.count - 1].pairs.first { $0.key.scalar?.isExactly(key) == true }?.key.location
            return Problem(
                diagnostic: .error(
                    .duplicateKey, "key `\(key)` appears twice in the same mapping", at: at,
                    notes: first.map { ["first written at \($0)"] } ?? [],
                    help: "keep one of the two; a key may appear only once in an object"))
        }

        // MARK: Scalars

        mutating func literal(_ word: StaticString, _ at: SourceLocation) throws(Problem) -> SyntaxNode {
            let n = word.utf8CodeUnitCount
            let w = UnsafeRawBufferPointer(start: word.utf8Start, count: n)
            for k in 0..<n where index + k >= bytes.count || bytes[index + k] != w[k] {
                throw syntax(
                    "expected `\(word)`", at: at,
                    help: "JSON's literals are `true`, `false` and `null`, in lower case; strings are in double quotes")
            }
            index += n
            return SyntaxNode(.scalar("\(word)", isPlain: true), at: at)
        }

        mutating func digits() -> Int {
            let start = index
            while index < bytes.count, bytes[index] >= 0x30, bytes[index] <= 0x39 { index += 1 }
            return index - start
        }

        /// `-? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?`, kept as written.
        mutating func number(_ at: SourceLocation) throws(Problem) -> SyntaxNode {
            let start = index
            let help = "write numbers such as `7`, `-1.5` or `2e3`"
            if bytes[index] == UInt8(ascii: "-") { index += 1 }
            let first = index
            let n = digits()
            if n == 0 { throw syntax("a number needs digits after `-`", help: help) }
            if n > 1, bytes[first] == UInt8(ascii: "0") {
                index = first
                throw syntax("a number cannot start with 0", help: "write numbers without leading zeros: `7`, not `07`")
            }
            if next == UInt8(ascii: ".") {
                index += 1
                if digits() == 0 { throw syntax("a number needs digits after `.`", help: help) }
            }
            if let e = next, e | 0x20 == UInt8(ascii: "e") {
                index += 1
                if let sign = next, sign == UInt8(ascii: "+") || sign == UInt8(ascii: "-") { index += 1 }
                if digits() == 0 { throw syntax("a number needs digits in its exponent", help: help) }
            }
            let text = String(decoding: UnsafeRawBufferPointer(rebasing: bytes[start..<index]), as: UTF8.self)
            return SyntaxNode(.scalar(text, isPlain: true), at: at)
        }

        /// A string from its opening quote: the decoded text.
        mutating func string() throws(Problem) -> String {
            let open = location
            index += 1
            let start = index
            var escaped = false
            scratch.removeAll(keepingCapacity: true)
            while index < bytes.count {
                let b = bytes[index]
                if b == UInt8(ascii: "\"") {
                    let text =
                        escaped
                        ? String(decoding: scratch, as: UTF8.self)
                        : String(decoding: UnsafeRawBufferPointer(rebasing: bytes[start..<index]), as: UTF8.self)
                    index += 1
                    return text
                }
                if b == UInt8(ascii: "\\") {
                    if !escaped {
                        escaped = true
                        scratch.append(contentsOf: UnsafeRawBufferPointer(rebasing: bytes[start..<index]))
                    }
                    try escape()
                    continue
                }
                if b < 0x20 {
                    if b == 0x0A || b == 0x0D {
                        throw syntax(
                            "a line break inside a string", notes: ["the string starts at \(open)"],
                            help: "close the string with `\"` before the line ends, or write the line break as `\\n`")
                    }
                    throw syntax(
                        "the control character U+\(hex(UInt32(b))) must be escaped in a string",
                        help: b == 0x09 ? "write a tab as `\\t`" : "write it as `\\u\(hex(UInt32(b)))`")
                }
                if b < 0x80 {
                    if escaped { scratch.append(b) }
                    index += 1
                    continue
                }
                let width = try scalarWidth()
                if escaped { scratch.append(contentsOf: UnsafeRawBufferPointer(rebasing: bytes[index..<(index + width)])) }
                index += width
                continuations += width - 1
            }
            throw syntax("a string is not closed", at: open, help: "close it with `\"`")
        }

        /// One escape, from its backslash, appended to `scratch` as UTF-8.
        mutating func escape() throws(Problem) {
            let at = location
            let help = "JSON's escapes are `\\\"`, `\\\\`, `\\/`, `\\b`, `\\f`, `\\n`, `\\r`, `\\t` and `\\u` with four hexadecimal digits"
            index += 1
            // At the end, the caller reports the string as not closed.
            guard let c = next else { return }
            let simple: UInt8? =
                switch c {
                case UInt8(ascii: "\""): 0x22
                case UInt8(ascii: "\\"): 0x5C
                case UInt8(ascii: "/"): 0x2F
                case UInt8(ascii: "b"): 0x08
                case UInt8(ascii: "f"): 0x0C
                case UInt8(ascii: "n"): 0x0A
                case UInt8(ascii: "r"): 0x0D
                case UInt8(ascii: "t"): 0x09
                default: nil
                }
            if let simple {
                scratch.append(simple)
                index += 1
                return
            }
            guard c == UInt8(ascii: "u") else {
                if c < 0x20 || c >= 0x7F {
                    let what = try found()
                    throw syntax("unknown escape: a backslash followed by \(what)", at: at, help: help)
                }
                throw syntax("unknown escape `\\\(Character(Unicode.Scalar(c)))`", at: at, help: help)
            }
            index += 1
            let unit = try hex4(at, help)
            var scalar = unit
            if unit >= 0xD800, unit <= 0xDBFF {
                // A high surrogate: a low one must follow, as `\uDC00`...`\uDFFF`.
                guard index + 1 < bytes.count, bytes[index] == UInt8(ascii: "\\"), bytes[index + 1] == UInt8(ascii: "u") else {
                    throw loneSurrogate(unit, at)
                }
                let lowAt = location
                index += 2
                let low = try hex4(lowAt, help)
                guard low >= 0xDC00, low <= 0xDFFF else { throw loneSurrogate(unit, at) }
                scalar = 0x10000 + ((unit - 0xD800) << 10) + (low - 0xDC00)
            } else if unit >= 0xDC00, unit <= 0xDFFF {
                throw loneSurrogate(unit, at)
            }
            let s = Unicode.Scalar(scalar)!
            scratch.append(contentsOf: UTF8.encode(s)!)
        }

        func loneSurrogate(_ unit: UInt32, _ at: SourceLocation) -> Problem {
            syntax(
                "`\\u\(hex(unit).lowercased())` is half of a surrogate pair, without its other half", at: at,
                help: "a character above U+FFFF is written as a pair, a high then a low half, such as `\\ud83d\\ude00`")
        }

        /// Four hexadecimal digits after `\u`.
        mutating func hex4(_ at: SourceLocation, _ help: String) throws(Problem) -> UInt32 {
            var v: UInt32 = 0
            for k in 0..<4 {
                guard index + k < bytes.count, let d = Self.hexValue(bytes[index + k]) else {
                    throw syntax("`\\u` needs four hexadecimal digits", at: at, help: help)
                }
                v = v << 4 | d
            }
            index += 4
            return v
        }

        static func hexValue(_ b: UInt8) -> UInt32? {
            switch b {
            case 0x30...0x39: UInt32(b - 0x30)
            case 0x41...0x46: UInt32(b - 0x41 + 10)
            case 0x61...0x66: UInt32(b - 0x61 + 10)
            default: nil
            }
        }

        /// The length of the valid UTF-8 sequence at `index` (a lead byte of 0x80 or more), or
        /// an `invalid-utf8` problem located at it.
        func scalarWidth() throws(Problem) -> Int {
            let width = TextEncoding.sequenceWidth(bytes, at: index)
            guard width > 0 else {
                // The same words and place as every reader: `TextEncoding` finds the first bad sequence.
                throw Problem(
                    diagnostic: TextEncoding.invalidUTF8(bytes, file: file)
                        ?? .error(.invalidUTF8, "the input is not valid UTF-8", at: location, help: "save the file as UTF-8"))
            }
            return width
        }
    }
}

private func hex(_ v: UInt32) -> String {
    let s = String(v, radix: 16, uppercase: true)
    return String(repeating: "0", count: max(0, 4 - s.count)) + s
}
