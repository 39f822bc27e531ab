/// The type of a declared attribute (`attributes:` in a policy).
public enum AttributeType: Sendable, Equatable, Codable {
    /// One of a closed list of words: `license: [active, revoked, none]`.
    case words([String])
    /// A dotted version such as `2.4.0`, compared part by part.
    case version
    case boolean
    case integer
    case duration
    case string

    /// The word used in messages: `one of active, revoked, none`, `a version`, ...
    public var name: String {
        switch self {
        case let .words(w): return "one of " + w.map { "`\($0)`" }.joined(separator: ", ")
        case .version: return "a version"
        case .boolean: return "`true` or `false`"
        case .integer: return "an integer"
        case .duration: return "a duration"
        case .string: return "a string"
        }
    }

    /// Whether `raw` (as an event reports it) is a value of this type.
    public func accepts(_ raw: String) -> Bool {
        switch self {
        case let .words(w): return w.containsExactly(raw)
        case .version: return Version(raw) != nil
        case .boolean: return raw.isExactly("true") || raw.isExactly("false")
        case .integer: return Self.integer(raw) != nil
        case .duration: return (try? TimeSpan.parse(raw).get()) != nil
        case .string: return true
        }
    }
}

extension AttributeType {
    /// An integer as an event reports it: an optional `-` and decimal digits, within 64 bits
    /// (no `+`, no spaces, no other forms), so that every runtime reads the same values.
    package static func integer(_ raw: String) -> Int64? {
        let digits = raw.utf8.first == UInt8(ascii: "-") ? raw.utf8.dropFirst() : raw.utf8[...]
        guard !digits.isEmpty, digits.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }) else { return nil }
        return Int64(raw)
    }
}

/// A declared attribute: a fact the client (or the server) reports with events, for rules.
public struct AttributeDeclaration: Sendable, Equatable, Codable {
    public var name: String
    public var type: AttributeType
    public init(name: String, type: AttributeType) {
        self.name = name
        self.type = type
    }
}

/// A dotted version (`2.4.0`), compared numerically part by part; missing parts are 0.
package struct Version: Sendable, Hashable, Comparable, Codable {
    package var parts: [Int]

    /// Parses `1`, `2.4`, `2.4.0` (one to four parts of decimal digits); nil for anything else.
    package init?(_ text: String) {
        var parts: [Int] = []
        for piece in text.split(separator: ".", omittingEmptySubsequences: false) {
            // Decimal digits only (no sign), within the platform's integers.
            guard !piece.isEmpty, piece.utf8.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }), let n = Int(piece) else {
                return nil
            }
            parts.append(n)
        }
        guard !parts.isEmpty, parts.count <= 4 else { return nil }
        self.parts = parts
    }

    package static func < (a: Version, b: Version) -> Bool {
        for i in 0..<max(a.parts.count, b.parts.count) {
            let x = i < a.parts.count ? a.parts[i] : 0
            let y = i < b.parts.count ? b.parts[i] : 0
            if x != y { return x < y }
        }
        return false
    }

    package static func == (a: Version, b: Version) -> Bool { !(a < b) && !(b < a) }
    package func hash(into h: inout Hasher) {
        var p = parts
        while p.last == 0 { p.removeLast() }
        h.combine(p)
    }
}

/// A custom rule (`rules:`): on some events, when a condition holds, restrict the session.
///
/// Rules only restrict: they run after every built-in lever that could deny (see
/// docs/how-a-decision-is-made.md, "Order of evaluation for a login attempt") and cannot say `allow`, so no rule can undo a revocation or a limit.
public struct Rule: Sendable, Equatable, Codable {
    /// Unique name, used in explanations and coverage.
    public var name: String
    /// The events the rule applies to (`launch`, `resume`, `biometric_succeeded`,
    /// `idp_login_succeeded`, `token_refreshed`).
    public var on: [EventKind]
    /// The condition text.
    public var when: String
    /// What happens when it holds.
    public var then: Outcome

    /// A rule's outcome: a decision (or none, with `read_only`), a reason and a message.
    public struct Outcome: Sendable, Equatable, Codable {
        public var decision: Decision?
        public var reason: Reason
        public var message: String?
        public var notices: Notices
        public var noticeDelay: TimeSpan?
        /// Mark the session read-only (only with no decision, on `idp_login_succeeded` and `token_refreshed`).
        public var readOnly: Bool
        public init(
            decision: Decision?, reason: Reason, message: String? = nil, notices: Notices = [],
            noticeDelay: TimeSpan? = nil, readOnly: Bool = false
        ) {
            self.decision = decision
            self.reason = reason
            self.message = message
            self.notices = notices
            self.noticeDelay = noticeDelay
            self.readOnly = readOnly
        }
    }

    public init(name: String, on: [EventKind] = [.launch, .resume], when: String, then: Outcome) {
        self.name = name
        self.on = on
        self.when = when
        self.then = then
    }

    /// The events a rule may apply to.
    public static let events: [EventKind] = [.launch, .resume, .biometricSucceeded, .idpLoginSucceeded, .tokenRefreshed]
}
