/// Names and words are compared as the machine format compares them (docs/machine-format.md,
/// "String equality"): Unicode scalar by Unicode scalar, never by canonical equivalence. Swift's
/// `==` on `String` asks canonical equivalence, which depends on the Unicode tables of the
/// standard library, and another runtime's tables are another version (java.text.Normalizer
/// knows Unicode 10 on JDK 11, 13 on JDK 17): two spellings one runtime takes for the same user
/// another takes for two. Equal scalars are equal on every runtime whatever its tables.
extension String {
    /// Whether `self` and `other` hold the same Unicode scalars in the same order (the same
    /// UTF-8 bytes): `"\u{E9}"` and `"e\u{301}"` are not the same name.
    @inline(__always) package func isExactly(_ other: String) -> Bool {
        utf8.count == other.utf8.count && utf8.elementsEqual(other.utf8)
    }
}

extension Sequence<String> {
    /// Whether the sequence holds `s`, compared scalar by scalar (`String.isExactly`).
    @inline(__always) package func containsExactly(_ s: String) -> Bool {
        contains { $0.isExactly(s) }
    }
}

/// A dictionary key compared scalar by scalar (`String.isExactly`): a `[String: V]` takes two
/// canonically equivalent keys for one.
package struct ExactName: Hashable, Sendable {
    /// The name as written.
    package let text: String

    @inline(__always) package init(_ text: String) { self.text = text }

    @inline(__always) package static func == (a: ExactName, b: ExactName) -> Bool { a.text.isExactly(b.text) }

    package func hash(into hasher: inout Hasher) {
        hasher.combine(text.utf8.count)
        for byte in text.utf8 { hasher.combine(byte) }
    }
}

extension Unicode.Scalar {
    /// Foundation's `whitespacesAndNewlines` as a fixed list, the one every runtime spells out
    /// (Unicode's `Zs`, `Zl` and `Zp` since Unicode 6.3, U+0009 to U+000D, U+0085): a name must
    /// not start or end with one. A fixed list, so the answer is not the platform's Unicode version.
    package var isSpaceOrNewline: Bool {
        switch value {
        case 0x09...0x0D, 0x20, 0x85, 0xA0, 0x1680, 0x2000...0x200A, 0x2028, 0x2029, 0x202F, 0x205F, 0x3000: true
        default: false
        }
    }
}
