/// Reading session states and events from located syntax (for `policyctl eval`, scenario
/// files and the server), with the same located diagnostics as policies.
extension SyntaxReader {
    /// Keys of a session state.
    package static let stateKeys = [
        "state", "user", "device", "auth_mode", "last_idp_login", "last_online", "last_activity",
        "highest_time", "failures", "read_only", "biometric_locked",
    ]
    /// Keys of an event's context (everything but `type` and `time`).
    package static let contextKeys = ["network", "user", "device", "auth_mode", "cause", "unsynced_items", "attributes", "app_id"]
    /// Keys of an event's `device`.
    package static let deviceKeys = ["id", "keystore", "integrity"]
    /// Keys of a session state's `failures`.
    package static let failureKeys = ["biometric", "offline_login", "idp_login"]

    /// Reads a session state. Times may be relative to `base` (`-2d`) when one is given.
    package mutating func sessionState(_ node: SyntaxNode, path: String, relativeTo base: Timestamp? = nil) -> SessionState? {
        guard let f = fields(node, path: path, allowed: Self.stateKeys) else { return nil }
        let before = diagnostics.count
        var s = SessionState()
        if let v = require(f, "state", help: "name the machine state, for example `state: active`") {
            s.state = keyword(v, f.path("state"), MachineState.self) ?? .signedOut
        }
        if let v = f["user"] { s.user = name(v, f.path("user")) }
        if let v = f["device"] { s.device = name(v, f.path("device")) }
        if let v = f["auth_mode"] { s.authMode = keyword(v, f.path("auth_mode"), AuthMode.self) }
        if let v = f["last_idp_login"] { s.lastIdPLogin = time(v, f.path("last_idp_login"), relativeTo: base) }
        if let v = f["last_online"] { s.lastOnline = time(v, f.path("last_online"), relativeTo: base) }
        if let v = f["last_activity"] { s.lastActivity = time(v, f.path("last_activity"), relativeTo: base) }
        if let v = f["highest_time"] { s.highestTime = time(v, f.path("highest_time"), relativeTo: base) }
        if let v = f["read_only"] { s.readOnly = bool(v, f.path("read_only")) ?? false }
        if let v = f["biometric_locked"] { s.biometricLocked = bool(v, f.path("biometric_locked")) ?? false }
        if let v = f["failures"], let ff = fields(v, path: f.path("failures"), allowed: Self.failureKeys) {
            func count(_ key: String) -> Int {
                guard let n = ff[key], let c = int(n, ff.path(key)) else { return 0 }
                if c < 0 { error(.invalidValue, "`\(ff.path(key))` cannot be negative", at: n); return 0 }
                return c
            }
            s.failures = SessionState.Failures(
                biometric: count("biometric"), offlineLogin: count("offline_login"), idpLogin: count("idp_login"))
        }
        return diagnostics.count == before ? s : nil
    }

    /// Reads an event in its JSON shape (`type`, `time` and context keys). `user`, if given, is
    /// the user the event is about when it does not say (the server's session path names one).
    package mutating func event(_ node: SyntaxNode, path: String, user: String? = nil) -> Event? {
        guard let f = fields(node, path: path, allowed: ["type", "time"] + Self.contextKeys) else { return nil }
        let before = diagnostics.count
        let kind = require(f, "type", help: "name the event, for example `type: launch`").flatMap {
            keyword($0, f.path("type"), EventKind.self)
        }
        let time = require(f, "time", help: "every event carries its time, for example `time: 2026-03-01T09:00:00Z`")
            .flatMap { self.time($0, f.path("time")) }
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
        if let v = f["network"] { e.network = keyword(v, f.path("network"), Network.self) }
        if let v = f["user"] { e.user = name(v, f.path("user")) }
        if let v = f["auth_mode"] { e.authMode = keyword(v, f.path("auth_mode"), AuthMode.self) }
        if let v = f["cause"] { e.cause = keyword(v, f.path("cause"), RefreshFailureCause.self) }
        if let v = f["unsynced_items"], let n = int(v, f.path("unsynced_items")) {
            if n < 0 { error(.invalidValue, "`\(f.path("unsynced_items"))` cannot be negative", at: v) } else { e.unsyncedItems = n }
        }
        if let v = f["app_id"] { e.appID = name(v, f.path("app_id")) }
        if let v = f["attributes"], case let .mapping(pairs) = v.kind {
            for (key, value) in pairs {
                guard let k = key.scalar else { continue }
                if let text = string(value, f.path("attributes.\(k)")) { e.attributes[k] = text }
            }
        } else if let v = f["attributes"] {
            error(
                .wrongType, "`\(f.path("attributes"))` must be a mapping, found \(v.shapeName)", at: v,
                help: "write `attributes: { license: revoked }`")
        }
        if let v = f["device"], let d = fields(v, path: f.path("device"), allowed: Self.deviceKeys) {
            if let x = d["id"] { e.device.id = name(x, d.path("id")) }
            if let x = d["keystore"] { e.device.keystore = keyword(x, d.path("keystore"), Keystore.self) }
            if let x = d["integrity"] { e.device.integrity = keyword(x, d.path("integrity"), Integrity.self) }
        }
    }

    /// Reports a fact the event's kind needs but does not carry (`launch` without `network`).
    package mutating func checkRequiredContext(_ e: Event, in f: Fields) {
        for fact in e.kind.requiredFacts.facts where !fact.isReported(in: e) && !f.has(fact.rawValue) {
            error(
                .missingKey, "event `\(e.kind.rawValue)` needs `\(fact.rawValue)`", at: f.node, help: fact.help(for: e.kind))
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

    /// Reads a batch, `{"items": [{"state": ..., "event": ...}, ...]}`, of at most `limit` items.
    package mutating func evaluationBatch(_ node: SyntaxNode, limit: Int) -> [(state: SessionState, event: Event)]? {
        guard let f = fields(node, path: "", allowed: ["items"]),
            let items = require(f, "items", help: "send `items`: a list of `{state, event}`").flatMap({ list($0, "items") })
        else { return nil }
        if items.count > limit {
            error(.inputTooLarge, "the batch has \(items.count) items, more than the limit of \(limit)", at: node, help: "split it")
            return nil
        }
        let before = diagnostics.count
        var out: [(state: SessionState, event: Event)] = []
        out.reserveCapacity(items.count)
        for (i, item) in items.enumerated() {
            if let input = evaluationInput(item, path: "items[\(i)]") { out.append(input) }
        }
        return diagnostics.count == before ? out : nil
    }
}
