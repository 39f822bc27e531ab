import Foundation
import SessionPolicyTestSupport
import Testing

@testable import SessionPolicy

/// The engine's names against spec/vocabulary.json, in both directions: a name the engine knows
/// that the file lacks, or one the file has that the engine lacks, fails with a sentence naming
/// it. The Java and JavaScript runtimes hold their own names against the same file.
@Suite("Vocabulary")
struct VocabularyTests {
    static func vocabulary() throws -> [String: [String]] {
        let data = try Data(contentsOf: URL(fileURLWithPath: Fixtures.path("spec/vocabulary.json")))
        let object = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        var sets: [String: [String]] = [:]
        for (key, value) in object where !key.hasPrefix("$") {
            sets[key] = try #require(value as? [String], "\(key) is not a list of names")
        }
        return sets
    }

    /// One guard of every kind. `kindCount` fails to compile when a kind is added, so that the
    /// kind is added here (and to spec/vocabulary.json) too.
    static let guards: [Guard] = [
        .always, .deviceCompromised, .clockRolledBack(tolerance: TimeSpan(seconds: 1)), .differentUser, .differentDevice,
        .sessionMaxExceeded(TimeSpan(seconds: 1)), .idleExceeded(TimeSpan(seconds: 1)), .offlineWindowExceeded(TimeSpan(seconds: 1)),
        .authModeMissing, .authModeNeedsIdP, .authModeNotOffline(AuthModeSet([.biometric])), .keystoreNotHardware,
        .biometricLocked, .authModeIs(.pin), .failureLimitReached(.biometric, limit: 1), .networkOffline,
        .refreshCause(.network), .unsyncedItems, .appNotTrusted, .ruleFactMissing(0), .rule(0), .switched(.user, .always),
    ]

    static func kindCount(_ g: Guard) -> Int {
        switch g {
        case .always, .deviceCompromised, .clockRolledBack, .differentUser, .differentDevice, .sessionMaxExceeded, .idleExceeded,
            .offlineWindowExceeded, .authModeMissing, .authModeNeedsIdP, .authModeNotOffline, .keystoreNotHardware,
            .biometricLocked, .authModeIs, .failureLimitReached, .networkOffline, .refreshCause, .unsyncedItems, .appNotTrusted,
            .ruleFactMissing, .rule, .switched:
            return 22
        }
    }

    /// One condition of every op (an exhaustive switch keeps the list whole, as for guards).
    static let conditions: [Condition] = [
        .oneOf(.event, ["launch"], negated: false), .number(.readOnly, .equal, 0), .version(.attribute("v"), .less, Version("1")!),
        .and(.oneOf(.event, [], negated: false), .oneOf(.event, [], negated: false)),
        .or(.oneOf(.event, [], negated: false), .oneOf(.event, [], negated: false)), .not(.oneOf(.event, [], negated: false)),
    ]

    static func opCount(_ c: Condition) -> Int {
        switch c {
        case .oneOf, .number, .version, .and, .or, .not: return 6
        }
    }

    static let comparisons: [SessionPolicy.Expression.Comparison] = [.equal, .notEqual, .less, .lessOrEqual, .greater, .greaterOrEqual]

    /// `in` is the policy language's, written as `one_of` in a machine document.
    static func inDocument(_ c: SessionPolicy.Expression.Comparison) -> Bool {
        switch c {
        case .equal, .notEqual, .less, .lessOrEqual, .greater, .greaterOrEqual: return true
        case .isIn: return false
        }
    }

    static let attributeTypes: [AttributeType] = [.words(["a"]), .version, .boolean, .integer, .duration, .string]

    static func typeCount(_ t: AttributeType) -> Int {
        switch t {
        case .words, .version, .boolean, .integer, .duration, .string: return 6
        }
    }

    static let failurePaths: [FailurePath] = [.biometric, .offlineLogin, .idpLogin]

    static func pathCount(_ p: FailurePath) -> Int {
        switch p {
        case .biometric, .offlineLogin, .idpLogin: return 3
        }
    }

    static func member(_ value: CanonicalJSON, _ key: String) -> String? {
        guard case let .object(m) = value, case let .string(s)? = m[key] else { return nil }
        return s
    }

    static func memberValue(_ value: CanonicalJSON, _ key: String) -> CanonicalJSON? {
        guard case let .object(m) = value else { return nil }
        return m[key]
    }

    /// The engine's names of each set of the file.
    static func engine() -> [String: [String]] {
        [
            "attribute_types": attributeTypes.compactMap {
                memberValue(MachineDocument.attribute(AttributeDeclaration(name: "a", type: $0)), "type").flatMap { member($0, "kind") }
            },
            "auth_modes": AuthMode.allCases.map(\.rawValue),
            "comparisons": comparisons.filter(inDocument).map(\.rawValue),
            "condition_ops": conditions.compactMap { member(MachineDocument.condition($0), "op") },
            "decisions": Decision.allCases.map(\.rawValue),
            "document_codes": MachineDocument.refusalCodes.map(\.rawValue),
            "effects": MachineDocument.effects.map(\.0),
            "events": EventKind.allCases.map(\.rawValue),
            "facts": Fact.builtInNames,
            "failure_paths": failurePaths.map(\.rawValue),
            "guards": guards.compactMap { member(MachineDocument.guardValue($0), "kind") },
            "integrities": Integrity.allCases.map(\.rawValue),
            "keystores": Keystore.allCases.map(\.rawValue),
            "networks": Network.allCases.map(\.rawValue),
            "notices": Notices.named.map(\.0),
            "reasons": Reason.builtIn.map(\.0.rawValue),
            "refresh_causes": RefreshFailureCause.allCases.map(\.rawValue),
            "scopes": Scope.allCases.map(\.rawValue),
            "states": MachineState.allCases.map(\.rawValue),
            "switches": SessionSwitch.allCases.map(\.rawValue),
        ]
    }

    /// The differences between the engine's names and the file's set, as sentences.
    static func differences(_ set: String, engine names: [String], file: [String]) -> [String] {
        var problems: [String] = []
        let lacking = names.filter { !file.contains($0) }
        let missing = file.filter { !names.contains($0) }
        let quoted = { (list: [String]) in list.map { "`\($0)`" }.joined(separator: ", ") }
        if !lacking.isEmpty { problems.append("\(set): the Swift engine knows \(quoted(lacking)), which spec/vocabulary.json lacks") }
        if !missing.isEmpty { problems.append("\(set): spec/vocabulary.json has \(quoted(missing)), which the Swift engine lacks") }
        if Set(names).count != names.count { problems.append("\(set): the Swift engine lists a name twice") }
        return problems
    }

    @Test("every set of spec/vocabulary.json is a sorted list of distinct names")
    func sorted() throws {
        for (set, names) in try Self.vocabulary() {
            #expect(!names.isEmpty, "\(set) is empty")
            #expect(
                names == Array(Set(names)).sorted(by: { Array($0.utf8).lexicographicallyPrecedes(Array($1.utf8)) }),
                "\(set) is not sorted, or holds a name twice")
        }
    }

    @Test("the engine's names are spec/vocabulary.json's, in both directions")
    func bothDirections() throws {
        #expect(Self.guards.map(Self.kindCount).allSatisfy { $0 == Self.guards.count })
        #expect(Self.conditions.map(Self.opCount).allSatisfy { $0 == Self.conditions.count })
        #expect(Self.attributeTypes.map(Self.typeCount).allSatisfy { $0 == Self.attributeTypes.count })
        #expect(Self.failurePaths.map(Self.pathCount).allSatisfy { $0 == Self.failurePaths.count })
        let file = try Self.vocabulary()
        let engine = Self.engine()
        #expect(engine.keys.sorted() == file.keys.sorted(), "the sets the test holds are not the sets of spec/vocabulary.json")
        let problems = file.keys.sorted().flatMap { Self.differences($0, engine: engine[$0] ?? [], file: file[$0] ?? []) }
        #expect(problems.isEmpty, "\(problems.joined(separator: "\n"))")
    }

    @Test("a difference is reported both ways")
    func reported() {
        #expect(
            Self.differences("notices", engine: ["a", "b"], file: ["b", "c"]) == [
                "notices: the Swift engine knows `a`, which spec/vocabulary.json lacks",
                "notices: spec/vocabulary.json has `c`, which the Swift engine lacks",
            ])
    }

    @Test("every code the conformance documents are refused with is a document code")
    func documentCodes() throws {
        let codes = Set(MachineDocument.refusalCodes.map(\.rawValue))
        var seen: Set<String> = []
        for file in ["spec/conformance/documents.jsonl", "spec/conformance/generated-documents.jsonl"] {
            let text = try String(contentsOfFile: Fixtures.path(file), encoding: .utf8)
            for line in text.split(separator: "\n") {
                let object = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
                if let code = object?["refuse"] as? String { seen.insert(code) }
            }
        }
        #expect(seen.subtracting(codes).isEmpty, "refused with codes that are not document codes: \(seen.subtracting(codes).sorted())")
    }
}
