/// Reading session states and events from located syntax (for `policyctl eval`, scenario
/// files and the server), with the same located diagnostics as policies.
extension SyntaxReader {
    /// Keys of a session state.
    package static var stateKeys: [String] { SessionState.Field.keys }
    /// Keys of an event's context (everything but `type` and `time`).
    package static var contextKeys: [String] { Event.Field.contextKeys }
    /// Keys of an event's `device`.
    package static var deviceKeys: [String] { Event.DeviceFacts.Field.keys }
    /// Keys of a session state's `failures`.
    package static var failureKeys: [String] { SessionState.Failures.Field.keys }

    /// Reads a session state. Times may be relative to `base` (`-2d`) when one is given.
    package mutating func sessionState(_ node: SyntaxNode, path: String, relativeTo base: Timestamp? = nil) -> SessionState? {
        typealias K = SessionState.Field
        guard let f = fields(node, path: path, allowed: Self.stateKeys) else { return nil }
        let before = diagnostics.count
        var s = SessionState()
        if let v = require(f, K.state.key, help: "name the machine state, for example `state: active`") {
            s.state = keyword(v, f.path(K.state.key), MachineState.self) ?? .signedOut
        }
        if let v = f[K.user.key] { s.user = identity(v, f.path(K.user.key)) }
        if let v = f[K.device.key] { s.device = identity(v, f.path(K.device.key)) }
        if let v = f[K.authMode.key] { s.authMode = keyword(v, f.path(K.authMode.key), AuthMode.self) }
        if let v = f[K.lastIdPLogin.key] { s.lastIdPLogin = time(v, f.path(K.lastIdPLogin.key), relativeTo: base) }
        if let v = f[K.lastOnline.key] { s.lastOnline = time(v, f.path(K.lastOnline.key), relativeTo: base) }
        if let v = f[K.lastActivity.key] { s.lastActivity = time(v, f.path(K.lastActivity.key), relativeTo: base) }
        if let v = f[K.highestTime.key] { s.highestTime = time(v, f.path(K.highestTime.key), relativeTo: base) }
        if let v = f[K.readOnly.key] { s.readOnly = bool(v, f.path(K.readOnly.key)) ?? false }
        if let v = f[K.biometricLocked.key] { s.biometricLocked = bool(v, f.path(K.biometricLocked.key)) ?? false }
        if let v = f[K.failures.key], let ff = fields(v, path: f.path(K.failures.key), allowed: Self.failureKeys) {
            func count(_ field: SessionState.Failures.Field) -> Int {
                let key = field.key
                guard let n = ff[key], let c = int(n, ff.path(key)) else { return 0 }
                if c < 0 { error(.invalidValue, "`\(ff.path(key))` cannot be negative", at: n); return 0 }
                return c
            }
            s.failures = SessionState.Failures(
                biometric: count(.biometric), offlineLogin: count(.offlineLogin), idpLogin: count(.idpLogin))
        }
        return diagnostics.count == before ? s : nil
    }

    /// Reads an event in its JSON shape (`type`, `time` and context keys). `user`, if given, is
    /// the user the event is about when it does not say (the server's session path names one).
    package mutating func event(_ node: SyntaxNode, path: String, user: String? = nil) -> Event? {
        typealias K = Event.Field
        guard let f = fields(node, path: path, allowed: K.keys) else { return nil }
        let before = diagnostics.count
        let kind = require(f, K.kind.key, help: "name the event, for example `type: launch`").flatMap {
            keyword($0, f.path(K.kind.key), EventKind.self)
        }
        let time = require(f, K.time.key, help: "every event carries its time, for example `time: 2026-03-01T09:00:00Z`")
            .flatMap { self.time($0, f.path(K.time.key)) }
        guard let kind, let time else { return nil }
        var e = Event(kind, at: time)
        e.user = user
        applyContext(f, to: &e)
        checkRequiredContext(e, in: f)
        return diagnostics.count == before ? e : nil
    }

    /// Applies the context keys present in `f` (network, user, device, ...) to `event`.
    /// Device facts merge key by key.
    package mutating func applyContext(_ f: Fields, to e: inout Event) {
        typealias K = Event.Field
        if let v = f[K.network.key] { e.network = keyword(v, f.path(K.network.key), Network.self) }
        if let v = f[K.user.key] { e.user = identity(v, f.path(K.user.key)) }
        if let v = f[K.authMode.key] { e.authMode = keyword(v, f.path(K.authMode.key), AuthMode.self) }
        if let v = f[K.cause.key] { e.cause = keyword(v, f.path(K.cause.key), RefreshFailureCause.self) }
        if let v = f[K.unsyncedItems.key], let n = int(v, f.path(K.unsyncedItems.key)) {
            if n < 0 { error(.invalidValue, "`\(f.path(K.unsyncedItems.key))` cannot be negative", at: v) } else { e.unsyncedItems = n }
        }
        if let v = f[K.appID.key] { e.appID = identity(v, f.path(K.appID.key)) }
        if let v = f[K.attributes.key], case let .mapping(pairs) = v.kind {
            for (key, value) in pairs {
                guard let k = key.scalar else { continue }
                if let text = string(value, f.path("\(K.attributes.key).\(k)")) { e.exactAttributes[ExactName(k)] = text }
            }
        } else if let v = f[K.attributes.key] {
            error(
                .wrongType, "`\(f.path(K.attributes.key))` must be a mapping, found \(v.shapeName)", at: v,
                help: "write `attributes: { license: revoked }`")
        }
        if let v = f[K.device.key], let d = fields(v, path: f.path(K.device.key), allowed: Self.deviceKeys) {
            typealias D = Event.DeviceFacts.Field
            if let x = d[D.id.key] { e.device.id = identity(x, d.path(D.id.key)) }
            if let x = d[D.keystore.key] { e.device.keystore = keyword(x, d.path(D.keystore.key), Keystore.self) }
            if let x = d[D.integrity.key] { e.device.integrity = keyword(x, d.path(D.integrity.key), Integrity.self) }
        }
    }

    /// Reports a fact the event's kind needs but does not carry (`launch` without `network`).
    package mutating func checkRequiredContext(_ e: Event, in f: Fields) {
        for fact in e.kind.requiredFacts.facts where !fact.isReported(in: e) && !f.has(fact.field.key) {
            error(
                .missingKey, "event `\(e.kind.rawValue)` needs `\(fact.field.key)`", at: f.node, help: fact.help(for: e.kind))
        }
    }
}

extension SyntaxReader {
    /// Reads one evaluation input, `{"state": {...}, "event": {...}}` with `state` optional
    /// (default: signed out): what `policyctl eval` and the server's evaluate endpoints take.
    package mutating func evaluationInput(_ node: SyntaxNode, path: String) -> (state: SessionState, event: Event)? {
        guard let f = fields(node, path: path, allowed: ["state", "event"]) else { return nil }
        let before = diagnostics.count
        var state = SessionState()
        if let s = f["state"], let st = sessionState(s, path: f.path("state")) { state = st }
        let event = require(f, "event", help: "add `event:` with `type`, `time` and its context").flatMap {
            self.event($0, path: f.path("event"))
        }
        guard let event, diagnostics.count == before else { return nil }
        return (state, event)
    }

    /// Reads a batch, `{"items": [{"state": ..., "event": ...}, ...]}`, of at most `limit` items,
    /// all or nothing: nil with every item's diagnostics if any item is invalid.
    package mutating func evaluationBatch(_ node: SyntaxNode, limit: Int) -> [(state: SessionState, event: Event)]? {
        guard let results = evaluationBatchItems(node, limit: limit) else { return nil }
        var out: [(state: SessionState, event: Event)] = []
        out.reserveCapacity(results.count)
        for result in results {
            switch result {
            case let .success(input): out.append(input)
            case let .failure(error): error.diagnostics.forEach { report($0) }
            }
        }
        return out.count == results.count ? out : nil
    }

    /// Reads a batch item by item: nil (with diagnostics) only when the batch itself is wrong
    /// (not `{"items": [...]}`, or more than `limit` items); otherwise each item's input, or
    /// the diagnostics of that item alone (located as `items[3].event.time`).
    package mutating func evaluationBatchItems(
        _ node: SyntaxNode, limit: Int
    ) -> [Result<(state: SessionState, event: Event), DiagnosticError>]? {
        guard let f = fields(node, path: "", allowed: ["items"]),
            let items = require(f, "items", help: "send `items`: a list of `{state, event}`").flatMap({ list($0, "items") })
        else { return nil }
        if items.count > limit {
            error(.inputTooLarge, "the batch has \(items.count) items, more than the limit of \(limit)", at: node, help: "split it")
            return nil
        }
        return items.enumerated().map { i, item in
            var reader = SyntaxReader()
            if let input = reader.evaluationInput(item, path: "items[\(i)]"), !reader.diagnostics.hasErrors { return .success(input) }
            return .failure(DiagnosticError(reader.diagnostics))
        }
    }
}
