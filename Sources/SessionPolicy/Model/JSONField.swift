import Foundation

/// One key of a JSON shape. Each shape (a session state, its failure counts, an event, the
/// event's device facts) has one field table: an enum of these, one case per key, and the only
/// place its keys are spelled. Everything that reads or writes the shape derives from it: the
/// located reader's key lists (`SyntaxReader.sessionState(_:path:)`), the fast reader's key
/// matching (`FastJSON`, in `SessionPolicyJSON`), the fast writer's key order, the `Codable` conformances (the table is
/// their `CodingKey`), and the tests that hold the JSON Schemas to the same keys.
package protocol JSONField: CodingKey, CaseIterable, Sendable, RawRepresentable
where RawValue == UInt8, AllCases == [Self] {
    /// The key as written in JSON.
    var name: StaticString { get }
    /// The field whose key is exactly `bytes`: the fast reader's matching, a `switch` on the
    /// key's length comparing with `name` (no allocation). `JSONFieldTests` checks that it
    /// matches exactly the keys `name` spells.
    init?(_ bytes: UnsafeRawBufferPointer)
}

extension JSONField {
    /// The key as a `String`.
    package var key: String { name.description }

    /// Every key of the shape, in declaration order.
    package static var keys: [String] { allCases.map(\.key) }

    /// The fields in the byte order of their keys: the order `JSONEncoder` with `.sortedKeys`
    /// writes them in, and the fast writer's.
    package static var sortedByKey: [Self] {
        allCases.sorted { Array($0.key.utf8).lexicographicallyPrecedes(Array($1.key.utf8)) }
    }

    /// The field's bit in a set of seen keys.
    @inline(__always) package var bit: UInt32 { 1 << rawValue }

    // CodingKey: the JSON key, no integer keys.
    package var stringValue: String { key }
    package init?(stringValue: String) {
        guard let field = Self.allCases.first(where: { $0.key == stringValue }) else { return nil }
        self = field
    }
    package var intValue: Int? { nil }
    package init?(intValue: Int) { nil }
}

/// Matching keys without making a `String`: the field tables' `init?(_:)` and the fast codec.
extension UnsafeRawBufferPointer {
    /// Whether these bytes are exactly `literal`'s UTF-8 (keys and literals are short: up to 16
    /// bytes are compared as two overlapping words).
    @inline(__always)
    package func equals(_ literal: StaticString) -> Bool {
        equals(UnsafeRawBufferPointer(start: literal.utf8Start, count: literal.utf8CodeUnitCount))
    }

    /// Whether these bytes are exactly `other`.
    @inline(__always)
    package func equals(_ other: UnsafeRawBufferPointer) -> Bool {
        let n = count
        guard n == other.count else { return false }
        guard n > 0, let a = baseAddress, let b = other.baseAddress else { return true }
        if n >= 8, n <= 16 {
            return a.loadUnaligned(as: UInt64.self) == b.loadUnaligned(as: UInt64.self)
                && a.loadUnaligned(fromByteOffset: n - 8, as: UInt64.self) == b.loadUnaligned(fromByteOffset: n - 8, as: UInt64.self)
        }
        if n >= 4, n < 8 {
            return a.loadUnaligned(as: UInt32.self) == b.loadUnaligned(as: UInt32.self)
                && a.loadUnaligned(fromByteOffset: n - 4, as: UInt32.self) == b.loadUnaligned(fromByteOffset: n - 4, as: UInt32.self)
        }
        return memcmp(a, b, n) == 0
    }
}
