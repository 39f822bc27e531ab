/// What every reader checks about raw bytes before it parses them, so that a file in the wrong
/// encoding or with a stray byte is reported at that byte, in words a policy author can act on:
/// UTF-16 and UTF-32 (with or without a byte-order mark) are recognised and named
/// (`unsupported-encoding`); invalid UTF-8 is located and its bytes named (`invalid-utf8`);
/// control characters a YAML file may not hold are located and named (`control-character`).
///
/// Lines end at `\n`, `\r\n` or `\r`; columns count Unicode scalars from 1, as everywhere else.
package enum TextEncoding {
    /// A wide Unicode encoding recognised from the first bytes: its name for people and for
    /// `iconv -f`.
    package struct Wide: Equatable, Sendable {
        package var name: String
        package var iconv: String
    }

    /// UTF-16 or UTF-32, told by a byte-order mark or, without one, by the zero bytes an ASCII
    /// first character leaves (`v\0` is UTF-16LE, `\0\0\0v` UTF-32BE, ...). Nil for anything else.
    package static func wide(_ b: UnsafeRawBufferPointer) -> Wide? {
        let n = b.count
        func at(_ i: Int) -> UInt8? { i < n ? b[i] : nil }
        switch (at(0), at(1), at(2), at(3)) {
        case (0x00, 0x00, 0xFE, 0xFF): return Wide(name: "UTF-32 (big-endian, with a byte-order mark)", iconv: "UTF-32")
        case (0xFF, 0xFE, 0x00, 0x00): return Wide(name: "UTF-32 (little-endian, with a byte-order mark)", iconv: "UTF-32")
        case (0xFE, 0xFF, _, _): return Wide(name: "UTF-16 (big-endian, with a byte-order mark)", iconv: "UTF-16")
        case (0xFF, 0xFE, _, _): return Wide(name: "UTF-16 (little-endian, with a byte-order mark)", iconv: "UTF-16")
        case (0x00, 0x00, 0x00, let c?) where c != 0: return Wide(name: "UTF-32 (big-endian)", iconv: "UTF-32BE")
        case (let c?, 0x00, 0x00, 0x00) where c != 0: return Wide(name: "UTF-32 (little-endian)", iconv: "UTF-32LE")
        case (0x00, let c?, _, _) where c != 0 && c < 0x80: return Wide(name: "UTF-16 (big-endian)", iconv: "UTF-16BE")
        case (let c?, 0x00, _, _) where c != 0 && c < 0x80: return Wide(name: "UTF-16 (little-endian)", iconv: "UTF-16LE")
        default: return nil
        }
    }

    /// The diagnostic for a file in a wide encoding, or nil.
    package static func wideEncodingProblem(_ b: UnsafeRawBufferPointer, file: String) -> Diagnostic? {
        guard let wide = wide(b) else { return nil }
        let shown = file == "-" || file == "<stdin>" ? "FILE" : file
        return .error(
            .unsupportedEncoding, "the input is in \(wide.name); only UTF-8 is read",
            at: SourceLocation(file: file, line: 1, column: 1),
            help: "convert it to UTF-8, for example `iconv -f \(wide.iconv) -t UTF-8 \(shown) > converted.yaml`")
    }

    /// The first invalid UTF-8 sequence, located, with its bytes named; nil if `b` is valid UTF-8.
    package static func invalidUTF8(_ b: UnsafeRawBufferPointer, file: String) -> Diagnostic? {
        var position = Position()
        var i = 0
        while i < b.count {
            let width = sequenceWidth(b, at: i)
            guard width > 0 else {
                // The bad byte and the continuation bytes after it: what a person sees in a hex dump.
                var end = i + 1
                while end < b.count, end - i < 4, b[end] & 0xC0 == 0x80 { end += 1 }
                let shown = (i..<end).map { "0x" + hex(b[$0]) }.joined(separator: " ")
                let latin1 = b[i] >= 0xA0 && (end == i + 1) ? " (a Latin-1 or Windows-1252 file?)" : ""
                return .error(
                    .invalidUTF8,
                    "\(end - i == 1 ? "byte" : "bytes") \(shown) at byte offset \(i) \(end - i == 1 ? "is" : "are") not valid UTF-8\(latin1)",
                    at: SourceLocation(file: file, line: position.line, column: position.column),
                    help: "save the file as UTF-8 (from Latin-1: `iconv -f LATIN1 -t UTF-8`)")
            }
            position.advance(b, at: i, width: width)
            i += width
        }
        return nil
    }

    /// Every control character YAML does not allow in a file (C0 other than tab, line feed and
    /// carriage return; DEL; C1 other than U+0085; U+FFFE and U+FFFF), each located and named,
    /// at most `limit` of them. `text` is valid UTF-8.
    package static func controlCharacters(_ text: String, file: String, limit: Int = 10) -> [Diagnostic] {
        var out: [Diagnostic] = []
        var line = 1, column = 1
        var afterCR = false
        for scalar in text.unicodeScalars {
            let v = scalar.value
            if v == 0x0A {
                if !afterCR { line += 1 }
                column = 1
                afterCR = false
                continue
            }
            afterCR = false
            if v == 0x0D {
                line += 1
                column = 1
                afterCR = true
                continue
            }
            if isForbidden(v) {
                if out.count == limit {
                    out[limit - 1].notes.append("more control characters follow; only the first \(limit) are shown")
                    return out
                }
                out.append(
                    .error(
                        .controlCharacter, "the file holds \(name(of: v)), a control character a YAML file may not contain",
                        at: SourceLocation(file: file, line: line, column: column),
                        help: v == 0
                            ? "remove it; NUL bytes usually mean a binary file, or one saved as UTF-16"
                            : "remove it, or write it as an escape (`\"\\u\(hex4(v))\"`) in a double-quoted string"))
            }
            column += 1
        }
        return out
    }

    /// True for the characters `controlCharacters` reports.
    package static func isForbidden(_ v: UInt32) -> Bool {
        (v < 0x20 && v != 0x09 && v != 0x0A && v != 0x0D) || v == 0x7F || (v >= 0x80 && v <= 0x9F && v != 0x85)
            || v == 0xFFFE || v == 0xFFFF
    }

    /// `U+0000 (NUL)`: the code point and, for the C0 controls and DEL, the usual abbreviation.
    package static func name(of v: UInt32) -> String {
        let c0 = [
            "NUL", "SOH", "STX", "ETX", "EOT", "ENQ", "ACK", "BEL", "BS", "TAB", "LF", "VT", "FF", "CR", "SO", "SI",
            "DLE", "DC1", "DC2", "DC3", "DC4", "NAK", "SYN", "ETB", "CAN", "EM", "SUB", "ESC", "FS", "GS", "RS", "US",
        ]
        let short = v < 0x20 ? c0[Int(v)] : v == 0x7F ? "DEL" : nil
        return "U+\(hex4(v))" + (short.map { " (\($0))" } ?? "")
    }

    // MARK: Helpers

    /// Line and column while walking bytes.
    struct Position {
        var line = 1, column = 1
        var afterCR = false

        mutating func advance(_ b: UnsafeRawBufferPointer, at i: Int, width: Int) {
            let byte = b[i]
            if byte == 0x0A {
                if !afterCR { line += 1 }
                column = 1
                afterCR = false
            } else if byte == 0x0D {
                line += 1
                column = 1
                afterCR = true
            } else {
                column += 1
                afterCR = false
            }
        }
    }

    /// The length of the valid UTF-8 sequence at `i`, or 0 if the bytes there are not one
    /// (overlong forms, surrogates and values past U+10FFFF included, as the standard says).
    static func sequenceWidth(_ b: UnsafeRawBufferPointer, at i: Int) -> Int {
        let c = b[i]
        if c < 0x80 { return 1 }
        func cont(_ k: Int, _ lo: UInt8 = 0x80, _ hi: UInt8 = 0xBF) -> Bool { i + k < b.count && b[i + k] >= lo && b[i + k] <= hi }
        switch c {
        case 0xC2...0xDF: return cont(1) ? 2 : 0
        case 0xE0: return cont(1, 0xA0) && cont(2) ? 3 : 0
        case 0xE1...0xEC, 0xEE...0xEF: return cont(1) && cont(2) ? 3 : 0
        case 0xED: return cont(1, 0x80, 0x9F) && cont(2) ? 3 : 0
        case 0xF0: return cont(1, 0x90) && cont(2) && cont(3) ? 4 : 0
        case 0xF1...0xF3: return cont(1) && cont(2) && cont(3) ? 4 : 0
        case 0xF4: return cont(1, 0x80, 0x8F) && cont(2) && cont(3) ? 4 : 0
        default: return 0
        }
    }

    static func hex(_ v: UInt8) -> String {
        let s = String(v, radix: 16, uppercase: true)
        return s.count == 1 ? "0" + s : s
    }

    static func hex4(_ v: UInt32) -> String {
        let s = String(v, radix: 16, uppercase: true)
        return String(repeating: "0", count: max(0, 4 - s.count)) + s
    }
}
