/// A fact of an event's context that some event kinds cannot do without.
package enum EventFact: Sendable, Hashable, CaseIterable {
    case network, authMode, appID, user, cause

    /// The event key that carries this fact.
    package var field: Event.Field {
        switch self {
        case .network: .network
        case .authMode: .authMode
        case .appID: .appID
        case .user: .user
        case .cause: .cause
        }
    }

    /// Every fact, in the order problems are reported.
    static let ordered: [EventFact] = [.network, .authMode, .appID, .user, .cause]

    @inline(__always) var bit: UInt8 {
        switch self {
        case .network: 1
        case .authMode: 2
        case .appID: 4
        case .user: 8
        case .cause: 16
        }
    }

    /// Whether `event` reports this fact.
    @inline(__always) package func isReported(in event: Event) -> Bool {
        switch self {
        case .network: event.network != nil
        case .authMode: event.authMode != nil
        case .appID: event.appID != nil
        case .user: event.user != nil
        case .cause: event.cause != nil
        }
    }

    /// How to add this fact to an event of `kind`, for diagnostics.
    package func help(for kind: EventKind) -> String {
        switch self {
        case .network: "add `network: online` or `network: offline`"
        case .authMode: "add the mode the user signed in with: `auth_mode: biometric`, `none`, `password` or `pin`"
        case .appID: "add the id of the app that created the device session: `app_id: com.example.app1`"
        case .user:
            kind == .idpLoginSucceeded
                ? "add the user who signed in: `user: alice`; the single-user rule depends on it" : "add the user of the detected session"
        case .cause: "add `cause: network` or `cause: invalid_token`"
        }
    }
}

/// The facts an event kind requires: the one statement of that rule, read by the located
/// reader (a diagnostic per missing fact), the fast reader (falls back) and the evaluator (an
/// incomplete event is `idp_login` with reason `invalid_event`, never `allow`).
package struct RequiredFacts: Sendable, Hashable {
    let bits: UInt8

    init(_ facts: EventFact...) { bits = facts.reduce(0) { $0 | $1.bit } }

    /// Whether `fact` is required.
    @inline(__always) package func contains(_ fact: EventFact) -> Bool { bits & fact.bit != 0 }
    /// The required facts, in reporting order.
    package var facts: [EventFact] { EventFact.ordered.filter(contains) }

    /// The first required fact `event` does not report, if any. Allocates nothing.
    @inline(__always) package func firstMissing(in event: Event) -> EventFact? {
        guard bits != 0 else { return nil }
        for f in EventFact.ordered where contains(f) && !f.isReported(in: event) { return f }
        return nil
    }
}

extension EventKind {
    /// The facts an event of this kind must carry.
    @inline(__always) package var requiredFacts: RequiredFacts {
        switch self {
        case .launch, .resume, .register: RequiredFacts(.network)
        case .idpLoginSucceeded: RequiredFacts(.authMode, .user)
        case .deviceSessionDetected: RequiredFacts(.appID, .user)
        case .refreshFailed: RequiredFacts(.cause)
        default: RequiredFacts()
        }
    }
}
