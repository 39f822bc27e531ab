/// The sections of levers: `session`, `offline`, `auth_modes`, `retry`, `fallback`, `signals`,
/// `device`, `cross_app` and `lint`.
extension PolicyReader {
    mutating func session(_ node: SyntaxNode) -> Policy.Session {
        var session = Policy.Session()
        guard let f = section(node, "session") else { return session }
        if let v = f["max"] {
            session.max = syntax.duration(v, "session.max")
            record("session.max", v)
        }
        if let v = f["idle"] {
            session.idle = syntax.duration(v, "session.idle")
            record("session.idle", v)
        }
        if let v = f["on_expired"] {
            session.onExpired = reaction(v, "session.on_expired") ?? .idpLogin
            record("session.on_expired", v)
        }
        return session
    }

    mutating func offline(_ node: SyntaxNode) -> Policy.Offline {
        var offline = Policy.Offline()
        guard let f = section(node, "offline") else { return offline }
        if let v = f["window"] {
            offline.window = syntax.duration(v, "offline.window")
            record("offline.window", v)
        }
        if let v = f["credential"] {
            offline.credential = syntax.keyword(v, "offline.credential", OfflineCredential.self) ?? .offlineToken
            record("offline.credential", v)
        }
        if let v = f["key_protection"] {
            offline.keyProtection = syntax.keyword(v, "offline.key_protection", KeyProtection.self) ?? .any
            record("offline.key_protection", v)
        }
        if let v = f["on_expired"] {
            offline.onExpired = reaction(v, "offline.on_expired") ?? .idpLogin
            record("offline.on_expired", v)
        }
        return offline
    }

    mutating func authModes(_ node: SyntaxNode) -> Policy.AuthModes {
        var authModes = Policy.AuthModes()
        guard let f = section(node, "auth_modes"), let v = f["offline"], let items = syntax.list(v, "auth_modes.offline") else {
            return authModes
        }
        record("auth_modes.offline", v)
        var modes: [AuthMode] = []
        for item in items {
            if let word = item.scalar, AuthMode(rawValue: word) == nil, !item.isNull {
                syntax.error(
                    .invalidValue, "`\(word)` is not an auth mode", at: item,
                    help: (Suggestion.closest(to: word, in: ["none", "biometric"]).map { "did you mean `\($0)`? " } ?? "")
                        + "offline modes are `none` and `biometric`")
                continue
            }
            guard let mode = syntax.keyword(item, "auth_modes.offline", AuthMode.self) else { continue }
            record("auth_modes.offline[\(modes.count)]", item)
            modes.append(mode)
        }
        authModes.offline = modes
        return authModes
    }

    mutating func retry(_ node: SyntaxNode) -> Policy.Retry {
        var retry = Policy.Retry()
        guard let f = section(node, "retry") else { return retry }
        for (key, limit) in PolicyLoader.retryLimits {
            let path = "retry.\(key)"
            guard let v = f[key], let rf = syntax.fields(v, path: path, allowed: PolicyLoader.retryLimitKeys) else { continue }
            record(path, v)
            if let m = rf["max"], let n = syntax.int(m, "\(path).max") {
                record("\(path).max", m)
                retry[keyPath: limit].max = n
            }
            if let t = rf["then"] {
                retry[keyPath: limit].then = reaction(t, "\(path).then") ?? retry[keyPath: limit].then
                record("\(path).then", t)
            }
        }
        return retry
    }

    mutating func fallback(_ node: SyntaxNode) -> Policy.Fallback {
        var fallback = Policy.Fallback()
        if let f = section(node, "fallback"), let v = f["on_offline_failure"] {
            fallback.onOfflineFailure = reaction(v, "fallback.on_offline_failure") ?? .idpLogin
            record("fallback.on_offline_failure", v)
        }
        return fallback
    }

    mutating func signals(_ node: SyntaxNode) -> Policy.Signals {
        var signals = Policy.Signals()
        guard let f = section(node, "signals") else { return signals }
        for (key, lever) in PolicyLoader.signalReactions {
            guard let v = f[key] else { continue }
            let path = "signals.\(key)"
            record(path, v)
            let allowed: [Reaction] = key == "license_revoked" ? [.readOnly, .wipe, .idpLogin] : PolicyLoader.endSession
            if let value = signalReaction(v, path, allowed: allowed) { signals[keyPath: lever] = value }
        }
        return signals
    }

    /// A signal's reaction: a word, or the long form `{then, notice_delay}`.
    private mutating func signalReaction(_ v: SyntaxNode, _ path: String, allowed: [Reaction]) -> Policy.SignalReaction? {
        guard case .mapping = v.kind else { return reaction(v, path, allowed: allowed).map { Policy.SignalReaction($0) } }
        guard let sf = syntax.fields(v, path: path, allowed: PolicyLoader.signalLongFormKeys) else { return nil }
        let then = syntax.require(sf, "then", help: "say what happens: " + allowed.map { "`\($0.rawValue)`" }.joined(separator: " or "))
            .flatMap { reaction($0, "\(path).then", allowed: allowed) }
        let delay = sf["notice_delay"].flatMap { syntax.duration($0, "\(path).notice_delay") }
        return then.map { Policy.SignalReaction($0, noticeDelay: delay) }
    }

    mutating func device(_ node: SyntaxNode) -> Policy.Device {
        var device = Policy.Device()
        guard let f = section(node, "device") else { return device }
        if let v = f["bind_session"] {
            device.bindSession = syntax.bool(v, "device.bind_session") ?? true
            record("device.bind_session", v)
        }
        if let v = f["single_user"] {
            device.singleUser = syntax.bool(v, "device.single_user") ?? true
            record("device.single_user", v)
        }
        if let v = f["clock_rollback"] {
            device.clockRollback = reaction(v, "device.clock_rollback") ?? .idpLogin
            record("device.clock_rollback", v)
        }
        if let v = f["clock_tolerance"] {
            device.clockTolerance = syntax.duration(v, "device.clock_tolerance") ?? .minutes(5)
            record("device.clock_tolerance", v)
        }
        if let v = f["compromised"] {
            device.compromised = reaction(v, "device.compromised") ?? .wipe
            record("device.compromised", v)
        }
        return device
    }

    mutating func crossApp(_ node: SyntaxNode) -> Policy.CrossApp {
        var crossApp = Policy.CrossApp()
        guard let f = section(node, "cross_app") else { return crossApp }
        if let v = f["adopt"] {
            crossApp.adopt = syntax.keyword(v, "cross_app.adopt", Policy.Adoption.self) ?? .never
            record("cross_app.adopt", v)
        }
        if let v = f["apps"], let items = syntax.list(v, "cross_app.apps") {
            record("cross_app.apps", v)
            crossApp.apps = items.compactMap { syntax.name($0, "cross_app.apps") }
        }
        if let v = f["reveal_refusal"] {
            crossApp.revealRefusal = syntax.bool(v, "cross_app.reveal_refusal") ?? false
            record("cross_app.reveal_refusal", v)
        }
        return crossApp
    }

    /// `lint.allow`: the warnings of `policyctl lint` the policy accepts on purpose.
    mutating func lint(_ node: SyntaxNode) -> Policy.LintSettings {
        var lint = Policy.LintSettings()
        guard let f = section(node, "lint"), let v = f["allow"], let items = syntax.list(v, "lint.allow") else { return lint }
        record("lint.allow", v)
        let known = PolicyLinter.lints.map(\.code.rawValue)
        var codes: [DiagnosticCode] = []
        for item in items {
            guard let word = syntax.string(item, "lint.allow") else { continue }
            if word == DiagnosticCode.unusedLintAllow.rawValue {
                syntax.error(.invalidValue, "`\(word)` cannot be allowed", at: item, help: "remove the unused entries it reports instead")
            } else if !known.contains(word) {
                syntax.error(
                    .invalidValue, "`\(word)` is not a lint warning", at: item,
                    help: Suggestion.closest(to: word, in: known).map { "did you mean `\($0)`?" }
                        ?? "the lint warnings are listed in docs/diagnostics.md")
            } else if codes.contains(DiagnosticCode(word)) {
                syntax.error(.duplicateValue, "`\(word)` is listed twice in `lint.allow`", at: item, help: "remove the second `\(word)`")
            } else {
                record("lint.allow[\(codes.count)]", item)
                codes.append(DiagnosticCode(word))
            }
        }
        lint.allow = codes
        return lint
    }
}
