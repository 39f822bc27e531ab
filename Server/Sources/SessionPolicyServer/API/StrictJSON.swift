/// A strict RFC 8259 syntax check for request bodies, with the position of the first mistake.
/// (The located reader behind it is a YAML reader, which would also accept YAML; and
/// Foundation's parser accepts trailing commas and reports no line.)
enum StrictJSON {
    /// The first mistake: what is wrong, and the 1-based line and column (in characters).
    struct Mistake: Equatable {
        var message: String
        var line: Int
        var column: Int
    }

    /// Nil when `bytes` is one JSON value with nothing but whitespace around it.
    static func check(_ bytes: UnsafeRawBufferPointer, maxDepth: Int = 64) -> Mistake? {
        var p = Parser(bytes: bytes, maxDepth: maxDepth)
        p.skipSpace()
        if p.i == bytes.count { return p.mistake("the body is empty; send a JSON object", at: p.i) }
        if let m = p.value(depth: 0) { return m }
        p.skipSpace()
        if p.i < bytes.count { return p.mistake("unexpected text after the JSON value", at: p.i) }
        return nil
    }

    private struct Parser {
        let bytes: UnsafeRawBufferPointer
        let maxDepth: Int
        var i = 0

        init(bytes: UnsafeRawBufferPointer, maxDepth: Int) {
            self.bytes = bytes
            self.maxDepth = maxDepth
        }

        func mistake(_ message: String, at offset: Int) -> Mistake {
            var line = 1
            var column = 1
            var k = 0
            while k < min(offset, bytes.count) {
                let b = bytes[k]
                if b == UInt8(ascii: "\n") {
                    line += 1
                    column = 1
                } else if b & 0xC0 != 0x80 {
                    column += 1  // count characters, not UTF-8 continuation bytes
                }
                k += 1
            }
            return Mistake(message: message, line: line, column: column)
        }

        mutating func skipSpace() {
            while i < bytes.count, [0x20, 0x09, 0x0A, 0x0D].contains(bytes[i]) { i += 1 }
        }

        func describe(_ offset: Int) -> String {
            guard offset < bytes.count else { return "the end of the body" }
            let b = bytes[offset]
            return b >= 0x20 && b < 0x7F ? "`\(Character(Unicode.Scalar(b)))`" : "byte 0x\(String(b, radix: 16))"
        }

        mutating func value(depth: Int) -> Mistake? {
            guard depth < maxDepth else { return mistake("JSON nested deeper than \(maxDepth) levels", at: i) }
            skipSpace()
            guard i < bytes.count else { return mistake("the JSON ends early", at: i) }
            switch bytes[i] {
            case UInt8(ascii: "{"): return object(depth: depth)
            case UInt8(ascii: "["): return array(depth: depth)
            case UInt8(ascii: "\""): return string()
            case UInt8(ascii: "t"): return literal("true")
            case UInt8(ascii: "f"): return literal("false")
            case UInt8(ascii: "n"): return literal("null")
            case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return number()
            default: return mistake("expected a JSON value, found \(describe(i))", at: i)
            }
        }

        mutating func object(depth: Int) -> Mistake? {
            i += 1
            skipSpace()
            if i < bytes.count, bytes[i] == UInt8(ascii: "}") {
                i += 1
                return nil
            }
            while true {
                skipSpace()
                guard i < bytes.count, bytes[i] == UInt8(ascii: "\"") else {
                    return mistake("expected a key in double quotes, found \(describe(i))", at: i)
                }
                if let m = string() { return m }
                skipSpace()
                guard i < bytes.count, bytes[i] == UInt8(ascii: ":") else {
                    return mistake("expected `:` after the key, found \(describe(i))", at: i)
                }
                i += 1
                if let m = value(depth: depth + 1) { return m }
                skipSpace()
                guard i < bytes.count else { return mistake("the JSON ends inside an object", at: i) }
                if bytes[i] == UInt8(ascii: "}") {
                    i += 1
                    return nil
                }
                guard bytes[i] == UInt8(ascii: ",") else { return mistake("expected `,` or `}`, found \(describe(i))", at: i) }
                i += 1
                skipSpace()
                if i < bytes.count, bytes[i] == UInt8(ascii: "}") { return mistake("trailing comma before `}`", at: i) }
            }
        }

        mutating func array(depth: Int) -> Mistake? {
            i += 1
            skipSpace()
            if i < bytes.count, bytes[i] == UInt8(ascii: "]") {
                i += 1
                return nil
            }
            while true {
                if let m = value(depth: depth + 1) { return m }
                skipSpace()
                guard i < bytes.count else { return mistake("the JSON ends inside an array", at: i) }
                if bytes[i] == UInt8(ascii: "]") {
                    i += 1
                    return nil
                }
                guard bytes[i] == UInt8(ascii: ",") else { return mistake("expected `,` or `]`, found \(describe(i))", at: i) }
                i += 1
                skipSpace()
                if i < bytes.count, bytes[i] == UInt8(ascii: "]") { return mistake("trailing comma before `]`", at: i) }
            }
        }

        mutating func string() -> Mistake? {
            let start = i
            i += 1
            while i < bytes.count {
                let b = bytes[i]
                if b == UInt8(ascii: "\"") {
                    i += 1
                    return nil
                }
                if b < 0x20 { return mistake("control character in a string; escape it", at: i) }
                if b == UInt8(ascii: "\\") {
                    i += 1
                    guard i < bytes.count else { break }
                    switch bytes[i] {
                    case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"), UInt8(ascii: "b"), UInt8(ascii: "f"),
                        UInt8(ascii: "n"), UInt8(ascii: "r"), UInt8(ascii: "t"):
                        i += 1
                    case UInt8(ascii: "u"):
                        for k in 1...4 {
                            guard i + k < bytes.count, Self.isHex(bytes[i + k]) else {
                                return mistake("`\\u` needs four hexadecimal digits", at: i - 1)
                            }
                        }
                        i += 5
                    default:
                        return mistake("unknown escape `\\\(describe(i))`", at: i - 1)
                    }
                    continue
                }
                i += 1
            }
            return mistake("a string is not closed", at: start)
        }

        static func isHex(_ b: UInt8) -> Bool {
            (b >= 0x30 && b <= 0x39) || (b >= 0x41 && b <= 0x46) || (b >= 0x61 && b <= 0x66)
        }

        mutating func literal(_ word: String) -> Mistake? {
            let w = Array(word.utf8)
            guard i + w.count <= bytes.count else { return mistake("expected `\(word)`", at: i) }
            for k in 0..<w.count where bytes[i + k] != w[k] { return mistake("expected `\(word)`", at: i) }
            i += w.count
            return nil
        }

        mutating func number() -> Mistake? {
            let start = i
            if bytes[i] == UInt8(ascii: "-") { i += 1 }
            func digits(_ p: inout Parser) -> Int {
                let s = p.i
                while p.i < p.bytes.count, p.bytes[p.i] >= 0x30, p.bytes[p.i] <= 0x39 { p.i += 1 }
                return p.i - s
            }
            let intStart = i
            let n = digits(&self)
            if n == 0 { return mistake("a number needs digits", at: start) }
            if n > 1, bytes[intStart] == UInt8(ascii: "0") { return mistake("a number cannot start with 0", at: start) }
            if i < bytes.count, bytes[i] == UInt8(ascii: ".") {
                i += 1
                if digits(&self) == 0 { return mistake("a number needs digits after `.`", at: start) }
            }
            if i < bytes.count, bytes[i] == UInt8(ascii: "e") || bytes[i] == UInt8(ascii: "E") {
                i += 1
                if i < bytes.count, bytes[i] == UInt8(ascii: "+") || bytes[i] == UInt8(ascii: "-") { i += 1 }
                if digits(&self) == 0 { return mistake("a number needs digits in its exponent", at: start) }
            }
            return nil
        }
    }
}
