public import SessionPolicy

/// A scenario: a policy, a start, an initial session state and steps with expectations.
public struct Scenario: Sendable {
    /// The file the scenario is in.
    public var file: String
    /// Where the scenario starts in the file.
    public var location: SourceLocation
    /// Its name, unique in its file.
    public var name: String
    /// The ids it demonstrates: behaviour ids of the catalogue (`K3`, `S2`, ...; `Behaviours.all`,
    /// docs/behaviours.md) and any requirement ids of the user's own (`REQ-12`), in file order.
    public var covers: [String]
    /// The name of the policy it runs against.
    public var policy: String
    /// Where the policy is named (the scenario's or the file's `policy:` value), if it is.
    public var policyLocation: SourceLocation? = nil
    /// The session state before the first step.
    public var initial: SessionState
    /// The steps, in order.
    public var steps: [Step]

    /// Whether any step checks anything. A scenario that expects nothing passes whatever the
    /// policy decides: `check` warns about it (`no-expectations`) and counts none of its ids as covered.
    public var expectsSomething: Bool { steps.contains { $0.expect.checksSomething } }

    /// One event and what must come of it.
    public struct Step: Sendable {
        /// 1-based position in the scenario.
        public var number: Int
        public var location: SourceLocation
        /// The event, or the diagnostics it produced when it is expected to be rejected.
        public var event: Result<Event, DiagnosticError>
        public var expect: Expectation
        /// Where each of the event's attributes was written (the step's own, or the scenario's
        /// `context`), for located load errors about attributes the policy does not declare.
        public var attributeSources: [String: SourceLocation] = [:]
    }

    /// What a step must produce; nil fields are not checked.
    public struct Expectation: Sendable {
        /// `.some(nil)` expects no decision.
        public var decision: Decision??
        public var reason: Reason?
        /// The exact human message.
        public var message: String?
        public var state: MachineState?
        /// `.some(nil)` expects no scope.
        public var scope: Scope??
        /// The exact set of notices.
        public var notices: Notices?
        /// `.some(nil)` expects no auth mode.
        public var authMode: AuthMode??
        public var noticeDelay: TimeSpan?
        /// The session's user afterwards.
        public var user: String?
        /// The diagnostic code the event must be rejected with.
        public var error: DiagnosticCode?
        /// Fields of the next session (`session:`); those given are checked.
        public var session: SessionExpectation?
        /// Where `reason` is written, for a located error when the policy never gives it.
        public var reasonLocation: SourceLocation?
        public init() {}

        /// Whether anything is checked: false for a step without `expect` or with `expect: {}`.
        /// A field added above must be added here too.
        public var checksSomething: Bool {
            decision != nil || reason != nil || message != nil || state != nil || scope != nil || notices != nil
                || authMode != nil || noticeDelay != nil || user != nil || error != nil || session?.checksSomething == true
        }
    }

    /// What the next session must hold (`expect: { session: {...} }`): the fields of a session
    /// state (as `state:` writes them); nil fields are not checked, `.some(nil)` expects none.
    public struct SessionExpectation: Sendable, Equatable {
        public var user: String??
        public var device: String??
        /// The auth mode the session records (not the outcome's `auth_mode`).
        public var authMode: AuthMode??
        public var lastIdPLogin: Timestamp??
        public var lastOnline: Timestamp??
        public var lastActivity: Timestamp??
        public var highestTime: Timestamp??
        public var readOnly: Bool?
        public var biometricLocked: Bool?
        public var failures: SessionState.Failures?
        public init() {}

        /// Whether anything is checked. A field added above must be added here too.
        public var checksSomething: Bool {
            user != nil || device != nil || authMode != nil || lastIdPLogin != nil || lastOnline != nil
                || lastActivity != nil || highestTime != nil || readOnly != nil || biometricLocked != nil || failures != nil
        }

        /// What differs in `s`, one line per field: `session.last_online: expected ..., got ...`.
        public func mismatches(_ s: SessionState) -> [String] {
            typealias K = SessionState.Field
            var out: [String] = []
            func show<T>(_ v: T?) -> String { v.map { "`\($0)`" } ?? "none" }
            func check<T: Equatable>(_ field: K, _ expected: T??, _ actual: T?) {
                if let e = expected, e != actual { out.append("session.\(field.key): expected \(show(e)), got \(show(actual))") }
            }
            check(.user, user, s.user)
            check(.device, device, s.device)
            check(.authMode, authMode.map { $0?.rawValue }, s.authMode?.rawValue)
            check(.lastIdPLogin, lastIdPLogin, s.lastIdPLogin)
            check(.lastOnline, lastOnline, s.lastOnline)
            check(.lastActivity, lastActivity, s.lastActivity)
            check(.highestTime, highestTime, s.highestTime)
            if let r = readOnly, r != s.readOnly { out.append("session.\(K.readOnly.key): expected `\(r)`, got `\(s.readOnly)`") }
            if let b = biometricLocked, b != s.biometricLocked {
                out.append("session.\(K.biometricLocked.key): expected `\(b)`, got `\(s.biometricLocked)`")
            }
            if let f = failures, f != s.failures {
                out.append(
                    "session.\(K.failures.key): expected `\(f.biometric)/\(f.offlineLogin)/\(f.idpLogin)`, got `\(s.failures.biometric)/\(s.failures.offlineLogin)/\(s.failures.idpLogin)` (biometric/offline_login/idp_login)"
                )
            }
            return out
        }
    }
}

/// The project's behaviour catalogue: the ids of `docs/behaviours.md`, in its order.
///
/// That document is the list's home (each id with its sentence and its source); this copy is
/// what the `policyctl` binary carries, and `BehaviourCatalogueTests` fails when the two differ.
/// Scenarios may also name ids of their own (a team's requirement ids): see `Scenario.covers`.
public enum Behaviours {
    /// Every catalogue id, in the document's order.
    public static let all: [String] = [
        "K1", "K2", "K3", "K4", "K5", "K6", "K7", "K8",
        "S1", "S2", "S3", "S4", "S5",
        "I1", "I2", "I3", "I4", "I5",
        "A1", "A2", "A3",
        "X1", "X2", "X3", "X4",
    ]

    /// The ids the server's tests show instead of scenarios (their entries say `Shown by: tests
    /// in ...`): a scenario drives the engine alone, and these belong to the server's device-session
    /// routes. `check` names them on its `behaviours covered` line, so their absence is explained.
    public static let shownByServerTests: [String] = ["A2", "A3"]

    /// Whether `id` is a catalogue id.
    public static func isCatalogue(_ id: String) -> Bool { all.contains(id) }

    /// For an id that is not in the catalogue but is written like one (a catalogue letter, in
    /// either case, then digits only: `K9`, `k3`, `S05`), what to say about it; nil for any
    /// other id, which is taken as the user's own requirement id without comment.
    static func lookalikeHelp(_ id: String) -> String? {
        guard !isCatalogue(id), let first = id.first, id.count > 1 else { return nil }
        let letters = Set(all.compactMap(\.first))
        let letter = Character(first.uppercased())
        let digits = id.dropFirst()
        guard letters.contains(letter), digits.allSatisfy(\.isASCII), let number = Int(digits), digits.allSatisfy(\.isNumber)
        else { return nil }
        let canonical = "\(letter)\(number)"
        if isCatalogue(canonical) { return "did you mean `\(canonical)`?" }
        let range = all.filter { $0.first == letter }
        return "the catalogue's \(letter) ids are \(range.first!)-\(range.last!) (docs/behaviours.md); "
            + "give a requirement of your own an id that does not look like one, such as `REQ-\(number)`"
    }
}
