import Foundation
import SessionPolicy

/// A cursor over the UTF-8 bytes of a JSON document, for `FastJSON`'s schema-driven readers.
///
/// It recognises a subset of JSON on which it reads exactly what the reference reader,
/// `JSONSyntax`, reads:
///
/// - strings without escapes (the reference decodes those; here they fall back), in valid
///   UTF-8, without control characters (which JSON refuses unescaped);
/// - non-negative integers without fraction, exponent or leading zeros;
/// - `true` and `false` (`null` is never a valid value in the shapes read here);
/// - JSON's whitespace (space, tab, line feed, carriage return) between any two tokens.
///
/// The readers are driven by the expected shape, so nesting is bounded by the shape; `depth`
/// is still counted and capped at `maxDepth`, and every value and key counts towards the same
/// node budget as the reference. Every method returns nil or false on anything outside the
/// subset; the scanner never traps on malformed input.
struct FastJSONScanner {
    /// The document.
    let bytes: UnsafeRawBufferPointer
    /// The next byte to read.
    private(set) var index = 0
    /// Containers currently open.
    private(set) var depth = 0
    /// Keys, values and containers read so far (the reference reader's node count).
    private(set) var nodes = 0

    /// Deepest nesting accepted (the shapes read need 5 levels).
    static let maxDepth = 32

    /// Most nodes accepted (the document's `InputLimits.nodes`).
    let maxNodes: Int

    init(_ bytes: UnsafeRawBufferPointer, maxNodes: Int = InputLimits.files.nodes) {
        self.bytes = bytes
        self.maxNodes = maxNodes
    }

    /// True once every byte is consumed.
    var atEnd: Bool { index == bytes.count }

    /// The byte at the cursor, if any.
    var next: UInt8? { index < bytes.count ? bytes[index] : nil }

    // MARK: Whitespace

    /// Skips JSON whitespace: space, tab, line feed, carriage return.
    mutating func skipSpace() {
        while index < bytes.count {
            switch bytes[index] {
            case 0x20, 0x0A, 0x0D, 0x09: index += 1
            default: return
            }
        }
    }

    /// Skips a byte-order mark at the very start (the reference ignores one there).
    mutating func skipByteOrderMark() {
        if index == 0, bytes.count >= 3, bytes[0] == 0xEF, bytes[1] == 0xBB, bytes[2] == 0xBF { index = 3 }
    }

    /// Skips whitespace, then consumes `byte` if it comes next.
    mutating func consume(_ byte: UInt8) -> Bool {
        skipSpace()
        guard index < bytes.count, bytes[index] == byte else { return false }
        index += 1
        return true
    }

    // MARK: Nodes

    /// Counts one node; false once the document has more than `maxNodes`.
    private mutating func count() -> Bool {
        nodes += 1
        return nodes <= maxNodes
    }

    /// Opens a container (`{` or `[`) after optional whitespace.
    private mutating func open(_ bracket: UInt8) -> Bool {
        guard consume(bracket), depth < Self.maxDepth, count() else { return false }
        depth += 1
        return true
    }

    /// Reads an object, calling `member` with each key (the bytes between the quotes) with the
    /// scanner positioned before the value. `member` reads the value and returns false to stop.
    /// False if the object is malformed or `member` stopped.
    mutating func object(_ member: (inout FastJSONScanner, UnsafeRawBufferPointer) -> Bool) -> Bool {
        guard open(UInt8(ascii: "{")) else { return false }
        if consume(UInt8(ascii: "}")) {
            depth -= 1
            return true
        }
        while true {
            guard let key = key(), member(&self, key) else { return false }
            skipSpace()
            guard index < bytes.count else { return false }
            switch bytes[index] {
            case UInt8(ascii: ","):
                index += 1
            case UInt8(ascii: "}"):
                index += 1
                depth -= 1
                return true
            default:
                return false
            }
        }
    }

    /// Reads an array, calling `element` with the scanner positioned before each element.
    /// `element` reads it and returns false to stop. False if malformed or stopped.
    mutating func array(_ element: (inout FastJSONScanner) -> Bool) -> Bool {
        guard open(UInt8(ascii: "[")) else { return false }
        if consume(UInt8(ascii: "]")) {
            depth -= 1
            return true
        }
        while true {
            guard element(&self) else { return false }
            skipSpace()
            guard index < bytes.count else { return false }
            switch bytes[index] {
            case UInt8(ascii: ","):
                index += 1
            case UInt8(ascii: "]"):
                index += 1
                depth -= 1
                return true
            default:
                return false
            }
        }
    }

    /// A key and its `:`.
    private mutating func key() -> UnsafeRawBufferPointer? {
        guard let key = string(), consume(UInt8(ascii: ":")) else { return nil }
        return key
    }

    // MARK: Scalars

    /// A string's bytes (between the quotes), if it is in the subset described above.
    mutating func string() -> UnsafeRawBufferPointer? {
        skipSpace()
        guard index < bytes.count, bytes[index] == UInt8(ascii: "\""), count() else { return nil }
        let base = bytes.baseAddress!
        let n = bytes.count
        let start = index + 1
        var i = start
        while true {
            // Eight bytes at a time, up to the first that needs a look.
            while i + 8 <= n {
                let flags = Self.flags(UInt64(littleEndian: base.loadUnaligned(fromByteOffset: i, as: UInt64.self)))
                if flags == 0 {
                    i += 8
                } else {
                    i += flags.trailingZeroBitCount >> 3
                    break
                }
            }
            guard i < n else { return nil }
            let b = base.load(fromByteOffset: i, as: UInt8.self)
            if b == UInt8(ascii: "\"") {
                index = i + 1
                return UnsafeRawBufferPointer(start: base + start, count: i - start)
            }
            if b < 0x80 {
                // Controls are invalid JSON; escapes are left to the reference.
                guard b >= 0x20, b != UInt8(ascii: "\\") else { return nil }
                i += 1
            } else {
                guard let width = Self.scalarWidth(bytes, at: i) else { return nil }
                i += width
            }
        }
    }

    /// The high bit of each of the 8 bytes in `w` (first byte lowest) that is a quote, a
    /// backslash, a control (below 0x20) or non-ASCII, by the usual "has a byte less than /
    /// equal to" bit tricks. Bits above the lowest may be false alarms (borrows carry upwards);
    /// the lowest set bit is always the first such byte, which is all that is used.
    @inline(__always)
    static func flags(_ w: UInt64) -> UInt64 {
        let ones: UInt64 = 0x0101_0101_0101_0101
        let high: UInt64 = 0x8080_8080_8080_8080
        func zeroBytes(_ v: UInt64) -> UInt64 { (v &- ones) & ~v & high }
        let below20 = (w &- ones &* 0x20) & ~w & high
        return (w & high) | below20 | zeroBytes(w ^ (ones &* 0x22)) | zeroBytes(w ^ (ones &* 0x5C))
    }

    /// The length of the UTF-8 sequence at `i` if it is valid UTF-8 (the sequences the
    /// reference accepts: no overlong forms, no surrogates, nothing above U+10FFFF).
    static func scalarWidth(_ b: UnsafeRawBufferPointer, at i: Int) -> Int? {
        let lead = b[i]
        func cont(_ k: Int, _ range: ClosedRange<UInt8> = 0x80...0xBF) -> Bool {
            i + k < b.count && range.contains(b[i + k])
        }
        switch lead {
        case 0xC2...0xDF: return cont(1) ? 2 : nil
        case 0xE0: return cont(1, 0xA0...0xBF) && cont(2) ? 3 : nil
        case 0xE1...0xEC, 0xEE...0xEF: return cont(1) && cont(2) ? 3 : nil
        case 0xED: return cont(1, 0x80...0x9F) && cont(2) ? 3 : nil
        case 0xF0: return cont(1, 0x90...0xBF) && cont(2) && cont(3) ? 4 : nil
        case 0xF1...0xF3: return cont(1) && cont(2) && cont(3) ? 4 : nil
        case 0xF4: return cont(1, 0x80...0x8F) && cont(2) && cont(3) ? 4 : nil
        default: return nil
        }
    }

    /// A non-negative integer without sign, fraction, exponent or leading zeros, that fits `Int`.
    mutating func integer() -> Int? {
        skipSpace()
        guard index < bytes.count, count() else { return nil }
        let start = index
        var value = 0
        while index < bytes.count, bytes[index] >= 0x30, bytes[index] <= 0x39 {
            let (m, o1) = value.multipliedReportingOverflow(by: 10)
            let (v, o2) = m.addingReportingOverflow(Int(bytes[index] - 0x30))
            guard !o1, !o2 else { return nil }
            value = v
            index += 1
        }
        let digits = index - start
        guard digits > 0, digits == 1 || bytes[start] != 0x30 else { return nil }
        if index < bytes.count, bytes[index] == UInt8(ascii: ".") || bytes[index] | 0x20 == UInt8(ascii: "e") { return nil }
        return value
    }

    /// `true` or `false`.
    mutating func boolean() -> Bool? {
        skipSpace()
        guard count() else { return nil }
        if matches("true") {
            index += 4
            return true
        }
        if matches("false") {
            index += 5
            return false
        }
        return nil
    }

    /// Whether the bytes at the cursor are `literal`.
    private func matches(_ literal: StaticString) -> Bool {
        let n = literal.utf8CodeUnitCount
        guard bytes.count - index >= n else { return false }
        return UnsafeRawBufferPointer(rebasing: bytes[index..<(index + n)]).equals(literal)
    }
}
