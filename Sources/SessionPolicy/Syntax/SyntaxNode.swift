/// A located syntax tree: what a YAML or JSON document says, with where it says it.
///
/// Front ends (`JSONSyntax` here, `YAMLSyntax` in `SessionPolicyYAML`) build it; the validators
/// read policies, session states, events and scenarios from it so that every problem has a
/// `file:line:column`.
package struct SyntaxNode: Sendable, Equatable {
    /// The shape of a node.
    package enum Kind: Sendable, Equatable {
        /// A scalar. `isPlain` is true for unquoted scalars, whose `null`/`true`/numbers are typed.
        case scalar(String, isPlain: Bool)
        /// An ordered list of nodes.
        case sequence([SyntaxNode])
        /// An ordered list of key/value pairs (keys are scalars in the files this tool reads).
        case mapping([(key: SyntaxNode, value: SyntaxNode)])

        package static func == (lhs: Kind, rhs: Kind) -> Bool {
            switch (lhs, rhs) {
            case let (.scalar(a, pa), .scalar(b, pb)): return a == b && pa == pb
            case let (.sequence(a), .sequence(b)): return a == b
            case let (.mapping(a), .mapping(b)):
                return a.count == b.count && zip(a, b).allSatisfy { $0.key == $1.key && $0.value == $1.value }
            default: return false
            }
        }
    }

    /// What the node holds.
    package var kind: Kind
    /// Where the node starts.
    package var location: SourceLocation

    /// Creates a node.
    package init(_ kind: Kind, at location: SourceLocation) {
        self.kind = kind
        self.location = location
    }

    /// The scalar text, if this is a scalar.
    package var scalar: String? {
        if case let .scalar(s, _) = kind { return s }
        return nil
    }

    /// True for a plain `null`, `~` or empty plain scalar.
    package var isNull: Bool {
        if case let .scalar(s, plain) = kind, plain { return s.isEmpty || s == "null" || s == "~" || s == "Null" || s == "NULL" }
        return false
    }

    /// The word used in messages for this node's shape.
    package var shapeName: String {
        switch kind {
        case .scalar: return isNull ? "null" : "a scalar"
        case .sequence: return "a list"
        case .mapping: return "a mapping"
        }
    }

    /// The value for `key` in a mapping node, if present.
    package subscript(key: String) -> SyntaxNode? {
        guard case let .mapping(pairs) = kind else { return nil }
        return pairs.first { $0.key.scalar == key }?.value
    }
}
