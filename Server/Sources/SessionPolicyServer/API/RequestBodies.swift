import Hummingbird
import SessionPolicy
import SessionPolicyJSON

/// `{"state": {...}, "event": {...}}`, `state` optional (signed out): the evaluate route's body.
struct EvaluationRequest: RequestBody {
    var state: SessionState
    var event: Event

    static func fast(_ bytes: UnsafeRawBufferPointer, limits: RequestLimits) -> Self? {
        FastJSON.evaluationRequest(bytes).map { Self(state: $0.state, event: $0.event) }
    }

    static func located(
        _ bytes: UnsafeRawBufferPointer, limits: RequestLimits, parameters: Parameters
    ) throws(DiagnosticError) -> Self {
        let request = try StrictJSON.evaluationRequest(bytes, file: StrictRequestDecoder.file, help: StrictRequestDecoder.help)
        return Self(state: request.state, event: request.event)
    }
}

/// `{"items": [{"state": ..., "event": ...}, ...]}`: the batch route's body, within the batch's
/// own byte limit and a node budget that follows its item limit. Each item is read on its own:
/// an invalid item is that item's diagnostics, not the batch's failure.
struct BatchRequest: RequestBody {
    var items: [Result<FastJSON.Request, DiagnosticError>]

    static func byteLimit(_ limits: RequestLimits) -> Int { limits.batchBytes }

    static func fast(_ bytes: UnsafeRawBufferPointer, limits: RequestLimits) -> Self? {
        FastJSON.batchRequest(bytes, maxBytes: limits.batchBytes, maxItems: limits.batchItems).map { Self(items: $0.map { .success($0) }) }
    }

    static func located(
        _ bytes: UnsafeRawBufferPointer, limits: RequestLimits, parameters: Parameters
    ) throws(DiagnosticError) -> Self {
        let items = try StrictJSON.batchRequest(
            bytes, file: StrictRequestDecoder.file, help: StrictRequestDecoder.help, maxBytes: limits.batchBytes,
            maxItems: limits.batchItems)
        return Self(items: items)
    }
}

/// `{"event": {...}}`: a session's event. The path's user is the event's user when it names none.
struct EventRequest: RequestBody {
    var event: Event
    /// The app's OpenID Connect ID token proving its own `idp_login_succeeded`, if sent.
    var idToken: String?
    /// The nonce the app sent with its authentication request, if it says.
    var nonce: String?

    static func fast(_ bytes: UnsafeRawBufferPointer, limits: RequestLimits) -> Self? {
        FastJSON.eventRequest(bytes).map { Self(event: $0) }
    }

    static func located(
        _ bytes: UnsafeRawBufferPointer, limits: RequestLimits, parameters: Parameters
    ) throws(DiagnosticError) -> Self {
        let (event, strings) = try StrictJSON.eventRequest(
            bytes, file: StrictRequestDecoder.file, help: StrictRequestDecoder.help, user: parameters.get("user"),
            strings: ["id_token", "nonce"], refuse: StoredName.refusal)
        return Self(event: event, idToken: strings["id_token"], nonce: strings["nonce"])
    }
}

/// A flat object of names with the keys `Keys` requires and allows (the device-session routes).
struct NamesRequest<Keys: NameKeys>: RequestBody {
    var names: [String: String]

    subscript(_ key: String) -> String? { names[key] }
    /// A required key's value (present once the body is read).
    func required(_ key: String) -> String { names[key, default: ""] }

    static func located(
        _ bytes: UnsafeRawBufferPointer, limits: RequestLimits, parameters: Parameters
    ) throws(DiagnosticError) -> Self {
        let names = try StrictJSON.names(
            bytes, file: StrictRequestDecoder.file, help: StrictRequestDecoder.help, required: Keys.required, optional: Keys.optional,
            refuse: StoredName.refusal)
        return Self(names: names)
    }
}

/// The keys of a `NamesRequest`.
protocol NameKeys: Sendable {
    static var required: [String] { get }
    static var optional: [String] { get }
}

/// Names the server stores (a session's user and device, a device session's names): U+0000 is
/// refused (400), since PostgreSQL's text cannot hold it, on every store alike.
enum StoredName {
    static func isStorable(_ name: String) -> Bool { !name.unicodeScalars.contains("\u{0}") }
    static func message(_ what: String) -> String { "`\(what)` contains U+0000, which the server does not store" }
    /// The refusal of the strict readers (`StrictJSON.Refusal`): names that are not storable.
    static func refusal(_ key: String, _ value: String) -> String? { isStorable(value) ? nil : message(key) }
}
