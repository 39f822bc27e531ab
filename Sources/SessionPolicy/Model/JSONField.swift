/// One key of a JSON shape. Each shape (a session state, its failure counts, an event, the
/// event's device facts) has one field table: an enum of these, one case per key, and the only
/// place its keys are spelled. Everything that reads or writes the shape derives from it: the
/// located reader's key lists (`SyntaxReader.sessionState(_:path:)`), the fast reader's key
/// matching (`FastJSON`), the fast writer's key order, the `Codable` conformances (the table is
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
