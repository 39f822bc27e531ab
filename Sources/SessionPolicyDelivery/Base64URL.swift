/// Base64url without padding (RFC 4648 §5), as JSON Web Signatures write their segments. The
/// decoder is strict (docs/envelope.md, step 2): only the 64 characters of the alphabet, no `=`,
/// no length of 4n + 1, and the unused low bits of the last character zero, so every byte string
/// has exactly one text. Public for the server's token reader and `policyctl token`, which
/// read and write the same segments.
public enum Base64URL {
    private static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)

    /// The text of `bytes`.
    public static func encode(_ bytes: some Collection<UInt8>) -> String {
        var out = [UInt8]()
        out.reserveCapacity((bytes.count * 4 + 2) / 3)
        var iterator = bytes.makeIterator()
        while let a = iterator.next() {
            let b = iterator.next()
            let c = b == nil ? nil : iterator.next()
            out.append(alphabet[Int(a >> 2)])
            out.append(alphabet[Int((a & 3) << 4 | (b ?? 0) >> 4)])
            if let b { out.append(alphabet[Int((b & 15) << 2 | (c ?? 0) >> 6)]) }
            if let c { out.append(alphabet[Int(c & 63)]) }
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// The bytes of `text`, or nil when it is not the one base64url text of some bytes.
    public static func decode(_ text: some Collection<UInt8>) -> [UInt8]? {
        if text.count % 4 == 1 { return nil }
        var out = [UInt8]()
        out.reserveCapacity(text.count * 3 / 4)
        var buffer: UInt32 = 0
        var bits = 0
        for c in text {
            guard let v = value(c) else { return nil }
            buffer = buffer << 6 | UInt32(v)
            bits += 6
            if bits >= 8 {
                bits -= 8
                out.append(UInt8(truncatingIfNeeded: buffer >> UInt32(bits)))
                buffer &= (1 << UInt32(bits)) - 1
            }
        }
        // 2 or 4 bits left over: they must be zero.
        return buffer == 0 ? out : nil
    }

    private static func value(_ c: UInt8) -> UInt8? {
        switch c {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"): c - UInt8(ascii: "A")
        case UInt8(ascii: "a")...UInt8(ascii: "z"): c - UInt8(ascii: "a") + 26
        case UInt8(ascii: "0")...UInt8(ascii: "9"): c - UInt8(ascii: "0") + 52
        case UInt8(ascii: "-"): 62
        case UInt8(ascii: "_"): 63
        default: nil
        }
    }
}
