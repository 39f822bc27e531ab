/// How serious a diagnostic is.
public enum Severity: String, Sendable, Codable, Comparable {
    case error
    case warning
    case note

    private var rank: Int {
        switch self {
        case .error: 0
        case .warning: 1
        case .note: 2
        }
    }

    public static func < (lhs: Severity, rhs: Severity) -> Bool { lhs.rank < rhs.rank }
}

/// A stable, kebab-case identifier of a kind of problem (for example `unknown-key`).
///
/// Codes are part of the public contract: tools match on them. Every code is documented in
/// `docs/diagnostics.md` with an example and its fix.
public struct DiagnosticCode: RawRepresentable, Hashable, Sendable, Codable, CustomStringConvertible {
    public var rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }
    public init(_ rawValue: String) { self.rawValue = rawValue }
    public var description: String { rawValue }

    public init(from decoder: any Decoder) throws {
        rawValue = try decoder.singleValueContainer().decode(String.self)
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.singleValueContainer()
        try c.encode(rawValue)
    }
}

extension DiagnosticCode {
    // Input that cannot be read at all.
    public static let fileNotFound = DiagnosticCode("file-not-found")
    public static let inputTooLarge = DiagnosticCode("input-too-large")
    public static let invalidUTF8 = DiagnosticCode("invalid-utf8")
    /// A file in UTF-16 or UTF-32 (`TextEncoding.wide`).
    public static let unsupportedEncoding = DiagnosticCode("unsupported-encoding")
    /// A control character a YAML file may not hold (NUL, ESC, ...), at its own place.
    public static let controlCharacter = DiagnosticCode("control-character")
    /// A second YAML document (`---`) in a file that holds one.
    public static let multipleDocuments = DiagnosticCode("multiple-documents")
    public static let yamlSyntax = DiagnosticCode("yaml-syntax")
    /// JSON that is not strict RFC 8259 JSON (`JSONSyntax`): trailing commas, bad escapes, ...
    public static let invalidJSON = DiagnosticCode("invalid-json")
    public static let yamlAnchor = DiagnosticCode("yaml-anchor")
    public static let nestingTooDeep = DiagnosticCode("nesting-too-deep")
    public static let tooManyNodes = DiagnosticCode("too-many-nodes")
    public static let duplicateKey = DiagnosticCode("duplicate-key")
    public static let emptyDocument = DiagnosticCode("empty-document")
    // Shape.
    public static let unknownKey = DiagnosticCode("unknown-key")
    public static let missingKey = DiagnosticCode("missing-key")
    public static let wrongType = DiagnosticCode("wrong-type")
    public static let invalidValue = DiagnosticCode("invalid-value")
    public static let invalidDuration = DiagnosticCode("invalid-duration")
    public static let invalidTime = DiagnosticCode("invalid-time")
    public static let unsupportedVersion = DiagnosticCode("unsupported-version")
    /// A machine document of a format version this engine does not read.
    public static let unsupportedFormat = DiagnosticCode("unsupported-format")
    /// A machine document whose digest does not match its content.
    public static let digestMismatch = DiagnosticCode("digest-mismatch")
    /// A machine document this engine cannot run as written.
    public static let inconsistentMachine = DiagnosticCode("inconsistent-machine")
    public static let duplicateValue = DiagnosticCode("duplicate-value")
    /// Two keys that cannot go together (two patterns in one property; `before` and `until`).
    public static let conflictingKeys = DiagnosticCode("conflicting-keys")
    /// A property whose pattern needs an end (`eventually`, `responds`) has no `before` or `until`.
    public static let propertyNeedsEnd = DiagnosticCode("property-needs-end")
    // Policy semantics.
    public static let offlineModeNeedsIdP = DiagnosticCode("offline-mode-needs-idp")
    public static let windowExceedsSessionMax = DiagnosticCode("window-exceeds-session-max")
    public static let retryMaxBelowOne = DiagnosticCode("retry-max-below-one")
    public static let reactionNotAllowed = DiagnosticCode("reaction-not-allowed")
    // Rules and attributes.
    public static let invalidExpression = DiagnosticCode("invalid-expression")
    public static let unknownAttribute = DiagnosticCode("unknown-attribute")
    public static let typeMismatch = DiagnosticCode("type-mismatch")
    public static let ruleNotAllowed = DiagnosticCode("rule-not-allowed")
    // Scenario files.
    public static let unknownPolicy = DiagnosticCode("unknown-policy")
    /// An expected `reason` the scenario's policy can never give (neither the engine nor its rules).
    public static let unknownReason = DiagnosticCode("unknown-reason")
    public static let duplicatePolicyName = DiagnosticCode("duplicate-policy-name")
    /// A warning: a `covers:` id written like a behaviour id of the catalogue that is not one.
    public static let unknownBehaviour = DiagnosticCode("unknown-behaviour")
    /// A warning: a scenario with no expectation in any step, which passes whatever happens.
    public static let noExpectations = DiagnosticCode("no-expectations")
    /// A warning: `check` skips a file it does not run (a property file, a compiled machine, an
    /// evaluation input) found among its policies and scenarios.
    public static let skippedFile = DiagnosticCode("skipped-file")
    public static let noScenarios = DiagnosticCode("no-scenarios")
    public static let noPolicies = DiagnosticCode("no-policies")
    // Lint warnings (`policyctl lint`): legal policies a security reviewer should look at.
    // `PolicyLinter.lints` says what each one checks and why.
    public static let noSessionMax = DiagnosticCode("no-session-max")
    public static let longOfflineWithoutBiometric = DiagnosticCode("long-offline-without-biometric")
    public static let retryLimitTooHigh = DiagnosticCode("retry-limit-too-high")
    public static let idleNeverDecides = DiagnosticCode("idle-never-decides")
    public static let windowNeverDecides = DiagnosticCode("window-never-decides")
    public static let weakRevocation = DiagnosticCode("weak-revocation")
    public static let compromisedDeviceNotWiped = DiagnosticCode("compromised-device-not-wiped")
    public static let largeClockTolerance = DiagnosticCode("large-clock-tolerance")
    public static let implicitKeyProtection = DiagnosticCode("implicit-key-protection")
    public static let ruleNeverFires = DiagnosticCode("rule-never-fires")
    public static let unusedLintAllow = DiagnosticCode("unused-lint-allow")
    /// A note (`policyctl lint`): a rule reads an attribute, so the events it applies to must carry it.
    public static let attributeRequired = DiagnosticCode("attribute-required")
}

/// One problem found in user input: a code, a severity, a message, where, and how to fix it.
///
/// Messages are one lowercase line with user input in backticks; the remedy goes in `help`.
public struct Diagnostic: Sendable, Codable, Equatable {
    /// How serious it is.
    public var severity: Severity
    /// The stable code.
    public var code: DiagnosticCode
    /// One line saying what is wrong.
    public var message: String
    /// Where it is, if it has a place.
    public var location: SourceLocation?
    /// Extra facts (for example where the first of two duplicates is).
    public var notes: [String]
    /// How to fix it (for example "did you mean `window`?").
    public var help: String?

    /// Creates a diagnostic.
    public init(
        _ severity: Severity, _ code: DiagnosticCode, _ message: String,
        at location: SourceLocation?, notes: [String] = [], help: String? = nil
    ) {
        self.severity = severity
        self.code = code
        self.message = message
        self.location = location
        self.notes = notes
        self.help = help
    }

    /// An error.
    public static func error(
        _ code: DiagnosticCode, _ message: String, at location: SourceLocation?,
        notes: [String] = [], help: String? = nil
    ) -> Diagnostic {
        Diagnostic(.error, code, message, at: location, notes: notes, help: help)
    }

    /// A warning.
    public static func warning(
        _ code: DiagnosticCode, _ message: String, at location: SourceLocation?,
        notes: [String] = [], help: String? = nil
    ) -> Diagnostic {
        Diagnostic(.warning, code, message, at: location, notes: notes, help: help)
    }

    private enum CodingKeys: String, CodingKey {
        case severity, code, message, file, line, column, notes, help
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        severity = try c.decode(Severity.self, forKey: .severity)
        code = try c.decode(DiagnosticCode.self, forKey: .code)
        message = try c.decode(String.self, forKey: .message)
        notes = try c.decodeIfPresent([String].self, forKey: .notes) ?? []
        help = try c.decodeIfPresent(String.self, forKey: .help)
        if let line = try c.decodeIfPresent(Int.self, forKey: .line) {
            location = SourceLocation(
                file: try c.decodeIfPresent(String.self, forKey: .file) ?? "", line: line,
                column: try c.decodeIfPresent(Int.self, forKey: .column) ?? 1)
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(severity, forKey: .severity)
        try c.encode(code, forKey: .code)
        try c.encode(message, forKey: .message)
        if let location {
            try c.encode(location.file, forKey: .file)
            try c.encode(location.line, forKey: .line)
            try c.encode(location.column, forKey: .column)
        }
        if !notes.isEmpty { try c.encode(notes, forKey: .notes) }
        try c.encodeIfPresent(help, forKey: .help)
    }
}

extension Array where Element == Diagnostic {
    /// True if any diagnostic is an error.
    public var hasErrors: Bool { contains { $0.severity == .error } }

    /// Sorted by file, line, column, severity, code: the stable order used for output.
    public func sortedForOutput() -> [Diagnostic] {
        sorted { a, b in
            let la = a.location ?? SourceLocation(file: "", line: 0, column: 0)
            let lb = b.location ?? SourceLocation(file: "", line: 0, column: 0)
            if la != lb { return la < lb }
            if a.severity != b.severity { return a.severity < b.severity }
            if a.code != b.code { return a.code.rawValue < b.code.rawValue }
            return a.message < b.message
        }
    }
}

/// Thrown when input does not load: carries every diagnostic found.
public struct DiagnosticError: Error, Sendable {
    /// The problems, in output order.
    public var diagnostics: [Diagnostic]
    public init(_ diagnostics: [Diagnostic]) { self.diagnostics = diagnostics.sortedForOutput() }
}
