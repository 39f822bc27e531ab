public import SessionPolicy

/// The shapes `FastJSON` reads, read by the reference instead: the core's strict, located JSON
/// reader (`JSONSyntax`) and its `SyntaxReader`. Every problem is a located diagnostic
/// (`FILE:LINE:COLUMN`, a stable code, a message and help), thrown as one `DiagnosticError`:
/// the server's 400 body and the CLI's output. This is where `FastJSON` falls back to, and what
/// it is held to (it reads the same values or declines).
///
/// `file` names the input in diagnostics (the server says `body`); `help` is the help of an
/// empty input.
public enum StrictJSON {
    /// What the reader of an event request or of names refuses beyond the shape: given a key
    /// (`event.user`) and its value, the message of the `invalid-value` error it is, or nil.
    public typealias Refusal = (_ key: String, _ value: String) -> String?

    /// A session state document: `{"state": "active", "user": "alice", ...}`.
    public static func sessionState(_ bytes: UnsafeRawBufferPointer, file: String) throws(DiagnosticError) -> SessionState {
        try JSONInput.read(bytes, file: file) { r, node in r.sessionState(node, path: "") }
    }

    /// An event document: `{"type": "launch", "time": "2026-03-01T09:00:00Z", ...}`.
    public static func event(_ bytes: UnsafeRawBufferPointer, file: String) throws(DiagnosticError) -> Event {
        try JSONInput.read(bytes, file: file) { r, node in r.event(node, path: "") }
    }

    /// An evaluation request, `{"state": {...}, "event": {...}}`, `state` optional (signed out).
    public static func evaluationRequest(
        _ bytes: UnsafeRawBufferPointer, file: String, help: String = "give a JSON object"
    ) throws(DiagnosticError) -> FastJSON.Request {
        try JSONInput.read(bytes, file: file, help: help) { r, node in r.evaluationInput(node, path: "") }
    }

    /// A batch of evaluation requests, `{"items": [...]}`, of at most `maxBytes` bytes and
    /// `maxItems` items. Thrown when the batch itself is wrong; otherwise each item's request,
    /// or the diagnostics of that item alone (located as `items[3].event.time`).
    public static func batchRequest(
        _ bytes: UnsafeRawBufferPointer, file: String, help: String = "give a JSON object", maxBytes: Int, maxItems: Int
    ) throws(DiagnosticError) -> [Result<FastJSON.Request, DiagnosticError>] {
        try JSONInput.read(bytes, file: file, limits: .batch(bytes: maxBytes, items: maxItems), help: help) { r, node in
            r.evaluationBatchItems(node, limit: maxItems)
        }
    }

    /// An event request, `{"event": {...}}`. An event that names no user is `user`'s (the
    /// server's path); `refuse` may refuse its names (`event.user`, `event.device.id`,
    /// `event.app_id`).
    public static func eventRequest(
        _ bytes: UnsafeRawBufferPointer, file: String, help: String = "give a JSON object", user: String?,
        refuse: Refusal = { _, _ in nil }
    ) throws(DiagnosticError) -> Event {
        try eventRequest(bytes, file: file, help: help, user: user, strings: [], refuse: refuse).event
    }

    /// An event request with optional string members beside `event`, any of `strings` (the
    /// server's `id_token` and `nonce`): the event and the strings given.
    public static func eventRequest(
        _ bytes: UnsafeRawBufferPointer, file: String, help: String = "give a JSON object", user: String?, strings: [String],
        refuse: Refusal = { _, _ in nil }
    ) throws(DiagnosticError) -> (event: Event, strings: [String: String]) {
        try JSONInput.read(bytes, file: file, help: help) { reader, node in
            guard let f = reader.fields(node, path: "", allowed: ["event"] + strings) else { return nil }
            var given: [String: String] = [:]
            for key in strings {
                if let v = f[key], let text = reader.string(v, key) { given[key] = text }
            }
            guard let node = reader.require(f, "event", help: "add `event:` with `type`, `time` and its context"),
                let event = reader.event(node, path: "event", user: user)
            else { return nil }
            for (key, value) in [("user", event.user), ("device.id", event.device.id), ("app_id", event.appID)] {
                if let value, let message = refuse("event.\(key)", value) { reader.error(.invalidValue, message, at: node) }
            }
            return reader.diagnostics.hasErrors ? nil : (event, given)
        }
    }

    /// A flat object of names (`{"user": "alice", "device": "d1"}`) with every key of
    /// `required`, any of `optional` and no other; `refuse` may refuse a value.
    public static func names(
        _ bytes: UnsafeRawBufferPointer, file: String, help: String = "give a JSON object", required: [String],
        optional: [String] = [], refuse: Refusal = { _, _ in nil }
    ) throws(DiagnosticError) -> [String: String] {
        try JSONInput.read(bytes, file: file, help: help) { reader, node in
            guard let f = reader.fields(node, path: "", allowed: required + optional) else { return nil }
            let before = reader.diagnostics.count
            var out: [String: String] = [:]
            func read(_ v: SyntaxNode, _ key: String) {
                guard let s = reader.identity(v, key) else { return }
                if let message = refuse(key, s) { reader.error(.invalidValue, message, at: v) } else { out[key] = s }
            }
            for key in required {
                if let v = reader.require(f, key) { read(v, key) }
            }
            for key in optional {
                if let v = f[key] { read(v, key) }
            }
            return reader.diagnostics.count == before ? out : nil
        }
    }
}
