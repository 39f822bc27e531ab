import ServiceContextModule
public import SessionPolicy
import SessionPolicyDelivery

/// The server's session logic without HTTP: apply an event to a stored session atomically, and
/// end the device sessions a wipe ends. The routes call it; another front end (a queue consumer,
/// a gRPC service) reuses it as it is.
public struct SessionService: Sendable {
    /// Where sessions and device sessions are kept.
    public let store: any SessionStore
    /// The server's clock, for the stored `updated_at` (never for decisions).
    public let clock: @Sendable () -> Timestamp

    /// A service over `store`.
    public init(store: any SessionStore, clock: @escaping @Sendable () -> Timestamp) {
        self.store = store
        self.clock = clock
    }

    /// What applying an event did.
    public struct Applied: Sendable {
        /// The decision and the new state.
        public var outcome: Outcome
        /// The stored session's revision after the event.
        public var revision: Int64
        /// How many cross-app device sessions the decision ended.
        public var deviceSessionsEnded: Int
    }

    /// Which device sessions a decision ends on the device: none, the reporting app's, or every
    /// app's. A wipe deletes the app's local data, so its device session goes with it (other apps
    /// no longer detect it); when the account or its tokens ended, or the event names no app, every
    /// app's session of the user on the device ends. The one statement of that rule.
    public enum DeviceSessionsEnded: Sendable, Equatable {
        case none
        case app(String)
        case everyApp
    }

    /// The device sessions `outcome` of `event` ends.
    public static func deviceSessionsEnded(by event: Event, _ outcome: Outcome) -> DeviceSessionsEnded {
        guard outcome.decision == .wipe else { return .none }
        if [.accountDeactivated, .tokensRevoked].contains(event.kind) { return .everyApp }
        return event.appID.map(DeviceSessionsEnded.app) ?? .everyApp
    }

    /// Evaluates `event` against the stored session of `key` (signed out when there is none) and
    /// stores the new state atomically (a session's events are serialized; none is lost), then
    /// ends the device sessions the decision ends. The event must already be the session's: its
    /// user and device are the key's.
    ///
    /// With `digest` (the machine's), the decision is appended to the decision log in the same
    /// transaction as the state, with its `origin` (who asked, the request, the ID token's methods).
    public func apply(
        _ event: Event, to key: SessionKey, policy: CompiledPolicy, digest: String? = nil, origin: DecisionOrigin = DecisionOrigin()
    ) async throws -> Applied {
        let now = clock()
        var log: (@Sendable (Outcome) -> DecisionRecord?)?
        if let digest {
            log = { @Sendable (outcome: Outcome) -> DecisionRecord? in
                origin.stamped(DecisionRecord(key: key, digest: digest, event: event, serverTime: now, outcome: outcome))
            }
        }
        let record = log
        // The evaluation may run on the store's writer thread: its span's parent is taken here.
        let (parent, tracer) = (ServiceContext.current, RequestTracing.tracer)
        let (saved, outcome) = try await store.updateSession(key, now: now, log: record) { old in
            let state = old?.state ?? SessionState(user: key.user, device: key.device)
            return RequestTracing.span("evaluate", parent: parent, tracer: tracer) { span in
                let outcome = policy.evaluate(state, event)
                RequestTracing.decided(span, policy: policy.name, digest: digest, outcome)
                return (outcome.state, outcome)
            }
        }
        var ended = 0
        switch Self.deviceSessionsEnded(by: event, outcome) {
        case .none: break
        case let .app(app):
            ended = try await store.deleteDeviceSessions(pool: nil, device: key.device, user: key.user, app: app)
        case .everyApp:
            ended = try await store.deleteDeviceSessions(pool: nil, device: key.device, user: key.user, app: nil)
        }
        return Applied(outcome: outcome, revision: saved.revision, deviceSessionsEnded: ended)
    }
}
