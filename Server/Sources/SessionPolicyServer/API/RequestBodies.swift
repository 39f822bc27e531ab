import Hummingbird
import SessionPolicy

/// `{"state": {...}, "event": {...}}`, `state` optional (signed out): the evaluate route's body.
struct EvaluationRequest: RequestBody {
    var state: SessionState
    var event: Event

    static func fast(_ bytes: UnsafeRawBufferPointer, limits: RequestLimits) -> Self? {
        FastJSON.evaluationRequest(bytes).map { Self(state: $0.state, event: $0.event) }
    }

    static func read(_ reader: inout SyntaxReader, _ node: SyntaxNode, limits: RequestLimits, parameters: Parameters) -> Self? {
        reader.evaluationInput(node, path: "").map { Self(state: $0.state, event: $0.event) }
    }
}

/// `{"items": [{"state": ..., "event": ...}, ...]}`: the batch route's body, within the batch's
/// own byte limit and a node budget that follows its item limit. Each item is read on its own:
/// an invalid item is that item's diagnostics, not the batch's failure.
struct BatchRequest: RequestBody {
    var items: [Result<FastJSON.Request, DiagnosticError>]

    static func byteLimit(_ limits: RequestLimits) -> Int { limits.batchBytes }
    static func inputLimits(_ limits: RequestLimits) -> InputLimits {
        .batch(bytes: limits.batchBytes, items: limits.batchItems)
    }

    static func fast(_ bytes: UnsafeRawBufferPointer, limits: RequestLimits) -> Self? {
        guard let items = FastJSON.batchRequest(bytes, limits: inputLimits(limits)), items.count <= limits.batchItems
        else { return nil }
        return Self(items: items.map { .success($0) })
    }

    static func read(_ reader: inout SyntaxReader, _ node: SyntaxNode, limits: RequestLimits, parameters: Parameters) -> Self? {
        reader.evaluationBatchItems(node, limit: limits.batchItems).map { results in
            Self(items: results.map { $0.map { (state: $0.state, event: $0.event) } })
        }
    }
}

/// `{"event": {...}}`: a session's event. The path's user is the event's user when it names none.
struct EventRequest: RequestBody {
    var event: Event

    static func fast(_ bytes: UnsafeRawBufferPointer, limits: RequestLimits) -> Self? {
        FastJSON.eventRequest(bytes).map { Self(event: $0) }
    }

    static func read(_ reader: inout SyntaxReader, _ node: SyntaxNode, limits: RequestLimits, parameters: Parameters) -> Self? {
        guard let f = reader.fields(node, path: "", allowed: ["event"]) else { return nil }
        guard let node = reader.require(f, "event", help: "add `event:` with `type`, `time` and its context"),
            let event = reader.event(node, path: "event", user: parameters.get("user"))
        else { return nil }
        for (key, value) in [("user", event.user), ("device.id", event.device.id), ("app_id", event.appID)] {
            if let value, !StoredName.isStorable(value) { reader.error(.invalidValue, StoredName.message("event.\(key)"), at: node) }
        }
        return reader.diagnostics.hasErrors ? nil : Self(event: event)
    }
}

/// A flat object of names with the keys `Keys` requires and allows (the device-session routes).
struct NamesRequest<Keys: NameKeys>: RequestBody {
    var names: [String: String]

    subscript(_ key: String) -> String? { names[key] }
    /// A required key's value (present once the body is read).
    func required(_ key: String) -> String { names[key, default: ""] }

    static func read(_ reader: inout SyntaxReader, _ node: SyntaxNode, limits: RequestLimits, parameters: Parameters) -> Self? {
        guard let f = reader.fields(node, path: "", allowed: Keys.required + Keys.optional) else { return nil }
        let before = reader.diagnostics.count
        var out: [String: String] = [:]
        func read(_ v: SyntaxNode, _ key: String) {
            guard let s = reader.identity(v, key) else { return }
            if StoredName.isStorable(s) { out[key] = s } else { reader.error(.invalidValue, StoredName.message(key), at: v) }
        }
        for key in Keys.required {
            if let v = reader.require(f, key) { read(v, key) }
        }
        for key in Keys.optional {
            if let v = f[key] { read(v, key) }
        }
        return reader.diagnostics.count == before ? Self(names: out) : nil
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
}
