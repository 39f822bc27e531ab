public import SessionPolicy

/// A scenario: a policy, a start, an initial session state and steps with expectations.
public struct Scenario: Sendable {
    /// The file the scenario is in.
    public var file: String
    /// Where the scenario starts in the file.
    public var location: SourceLocation
    /// Its name, unique in its file.
    public var name: String
    /// The SPEC behaviour ids it demonstrates (`K3`, `S2`, ...).
    public var covers: [String]
    /// The name of the policy it runs against.
    public var policy: String
    /// The session state before the first step.
    public var initial: SessionState
    /// The steps, in order.
    public var steps: [Step]

    /// One event and what must come of it.
    public struct Step: Sendable {
        /// 1-based position in the scenario.
        public var number: Int
        public var location: SourceLocation
        /// The event, or the diagnostics it produced when it is expected to be rejected.
        public var event: Result<Event, DiagnosticError>
        public var expect: Expectation
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
        public init() {}
    }
}

/// The behaviour ids of SPEC §4 that scenarios may cover.
public enum Behaviours {
    public static let all: [String] =
        (1...8).map { "K\($0)" } + (1...5).map { "S\($0)" } + (1...5).map { "I\($0)" } + (1...3).map { "A\($0)" } + (1...4).map { "X\($0)" }
}
