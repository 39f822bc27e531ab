/// Reads and validates a policy from located syntax (the levers of the README's "Policy language
/// reference"). Every problem in the file is reported, each with its place and a hint.
package enum PolicyLoader {
    /// How a policy file starts: the hint for an empty file or one that is not a mapping.
    package static let start =
        "a policy is a mapping that starts `version: 1` and `name: NAME`, then its sections (`session:`, `offline:`, ...)"
    // The keys each mapping accepts. The loader reads them from here, and the tests check
    // that `schemas/policy.schema.json` lists exactly the same keys.
    package static let topKeys = [
        "version", "name", "description", "session", "offline", "auth_modes", "retry", "fallback", "signals", "device", "cross_app",
        "attributes", "rules", "lint",
    ]
    package static let retryPaths = ["biometric", "offline_login", "idp_login"]
    package static let signalKeys = [
        "account_deactivated", "tokens_revoked", "license_revoked", "biometric_enrollment_changed", "logout", "refresh_token_invalid",
    ]
    /// The keys of each section (a top-level mapping), by section name.
    package static let sectionKeys: [String: [String]] = [
        "session": ["max", "idle", "on_expired"],
        "offline": ["window", "credential", "key_protection", "on_expired"],
        "auth_modes": ["offline"],
        "retry": retryPaths,
        "fallback": ["on_offline_failure"],
        "signals": signalKeys,
        "device": ["single_user", "bind_session", "clock_rollback", "clock_tolerance", "compromised"],
        "cross_app": ["adopt", "apps", "reveal_refusal"],
        "lint": ["allow"],
    ]
    /// The keys of one rule, and of its `then`.
    package static let ruleKeys = ["name", "on", "when", "then", "description"]
    package static let ruleOutcomeKeys = ["decision", "reason", "message", "notices", "notice_delay", "state"]
    /// The keys of one retry limit (`retry.biometric: {max, then}`).
    package static let retryLimitKeys = ["max", "then"]
    /// The keys of a signal's long form (`{then, notice_delay}`).
    package static let signalLongFormKeys = ["then", "notice_delay"]
    /// The reactions of every lever but `signals.license_revoked`, which also takes `read_only`.
    package static let endSession: [Reaction] = [.idpLogin, .wipe]

    /// Reads the policy and validates it (once): the validated policy, or nil when there are
    /// errors; and every diagnostic (errors and warnings), sorted.
    package static func load(_ root: SyntaxNode) -> (policy: ValidatedPolicy?, diagnostics: [Diagnostic]) {
        var r = SyntaxReader()
        var p = Policy(name: "")
        guard let top = r.fields(root, path: "", allowed: topKeys, start: Self.start) else { return (nil, r.diagnostics) }

        if let v = r.require(top, "version", help: "add `version: 1` as the first line of the policy") {
            if let n = r.int(v, "version") {
                p.version = n
                p.sources["version"] = v.location
            }
        }
        if let n = r.require(top, "name", help: "add `name: my-policy`; scenario files refer to policies by name"),
            let name = r.name(n, "name")
        {
            p.name = name
            p.sources["name"] = n.location
        }
        if let d = top["description"] { p.description = r.string(d, "description") }

        func record(_ path: String, _ node: SyntaxNode?) { if let node { p.sources[path] = node.location } }
        func reaction(_ node: SyntaxNode, _ path: String, allowed: [Reaction] = endSession) -> Reaction? {
            if case let .scalar(text, _) = node.kind, text == "allow" {
                r.error(
                    .reactionNotAllowed, "`\(path)` cannot be `allow`", at: node,
                    help: "the engine fails closed: use " + allowed.map { "`\($0.rawValue)`" }.joined(separator: " or "))
                return nil
            }
            // Any reaction word is read here; which ones a lever accepts is the validator's check.
            if case let .scalar(text, _) = node.kind, Reaction(rawValue: text) != nil {
                return r.keyword(node, path, Reaction.self)
            }
            return r.keyword(node, path, Reaction.self, allowed: allowed)
        }

        // session
        if let node = top["session"], let f = r.fields(node, path: "session", allowed: sectionKeys["session", default: []]) {
            record("session", node)
            if let v = f["max"] { p.session.max = r.duration(v, "session.max"); record("session.max", v) }
            if let v = f["idle"] { p.session.idle = r.duration(v, "session.idle"); record("session.idle", v) }
            if let v = f["on_expired"] {
                p.session.onExpired = reaction(v, "session.on_expired") ?? .idpLogin; record("session.on_expired", v)
            }
        }
        // offline
        if let node = top["offline"],
            let f = r.fields(node, path: "offline", allowed: sectionKeys["offline", default: []])
        {
            record("offline", node)
            if let v = f["window"] { p.offline.window = r.duration(v, "offline.window"); record("offline.window", v) }
            if let v = f["credential"] {
                p.offline.credential = r.keyword(v, "offline.credential", OfflineCredential.self) ?? .offlineToken
                record("offline.credential", v)
            }
            if let v = f["key_protection"] {
                p.offline.keyProtection = r.keyword(v, "offline.key_protection", KeyProtection.self) ?? .any
                record("offline.key_protection", v)
            }
            if let v = f["on_expired"] {
                p.offline.onExpired = reaction(v, "offline.on_expired") ?? .idpLogin; record("offline.on_expired", v)
            }
        }
        // auth_modes
        if let node = top["auth_modes"], let f = r.fields(node, path: "auth_modes", allowed: sectionKeys["auth_modes", default: []]) {
            record("auth_modes", node)
            if let v = f["offline"], let items = r.list(v, "auth_modes.offline") {
                record("auth_modes.offline", v)
                var modes: [AuthMode] = []
                for item in items {
                    if let word = item.scalar, AuthMode(rawValue: word) == nil, !item.isNull {
                        r.error(
                            .invalidValue, "`\(word)` is not an auth mode", at: item,
                            help: (Suggestion.closest(to: word, in: ["none", "biometric"]).map { "did you mean `\($0)`? " } ?? "")
                                + "offline modes are `none` and `biometric`")
                        continue
                    }
                    guard let m = r.keyword(item, "auth_modes.offline", AuthMode.self) else { continue }
                    p.sources["auth_modes.offline[\(modes.count)]"] = item.location
                    modes.append(m)
                }
                p.authModes.offline = modes
            }
        }
        // retry
        if let node = top["retry"], let f = r.fields(node, path: "retry", allowed: sectionKeys["retry", default: []]) {
            record("retry", node)
            for key in retryPaths {
                guard let v = f[key], let rf = r.fields(v, path: "retry.\(key)", allowed: retryLimitKeys) else { continue }
                record("retry.\(key)", v)
                var limit: Policy.RetryLimit
                switch key {
                case "biometric": limit = p.retry.biometric
                case "offline_login": limit = p.retry.offlineLogin
                default: limit = p.retry.idpLogin
                }
                if let m = rf["max"], let n = r.int(m, "retry.\(key).max") {
                    record("retry.\(key).max", m)
                    limit.max = n
                }
                if let t = rf["then"] { limit.then = reaction(t, "retry.\(key).then") ?? limit.then; record("retry.\(key).then", t) }
                switch key {
                case "biometric": p.retry.biometric = limit
                case "offline_login": p.retry.offlineLogin = limit
                default: p.retry.idpLogin = limit
                }
            }
        }
        // fallback
        if let node = top["fallback"], let f = r.fields(node, path: "fallback", allowed: sectionKeys["fallback", default: []]) {
            record("fallback", node)
            if let v = f["on_offline_failure"] {
                p.fallback.onOfflineFailure = reaction(v, "fallback.on_offline_failure") ?? .idpLogin
                record("fallback.on_offline_failure", v)
            }
        }
        // signals
        if let node = top["signals"], let f = r.fields(node, path: "signals", allowed: sectionKeys["signals", default: []]) {
            record("signals", node)
            for key in signalKeys {
                guard let v = f[key] else { continue }
                let path = "signals.\(key)"
                record(path, v)
                let allowed: [Reaction] = key == "license_revoked" ? [.readOnly, .wipe, .idpLogin] : endSession
                var value: Policy.SignalReaction?
                if case .mapping = v.kind {
                    if let sf = r.fields(v, path: path, allowed: signalLongFormKeys) {
                        let then = r.require(
                            sf, "then", help: "say what happens: " + allowed.map { "`\($0.rawValue)`" }.joined(separator: " or ")
                        )
                        .flatMap { reaction($0, "\(path).then", allowed: allowed) }
                        let delay = sf["notice_delay"].flatMap { r.duration($0, "\(path).notice_delay") }
                        if let then { value = Policy.SignalReaction(then, noticeDelay: delay) }
                    }
                } else if let then = reaction(v, path, allowed: allowed) {
                    value = Policy.SignalReaction(then)
                }
                guard let value else { continue }
                switch key {
                case "account_deactivated": p.signals.accountDeactivated = value
                case "tokens_revoked": p.signals.tokensRevoked = value
                case "license_revoked": p.signals.licenseRevoked = value
                case "biometric_enrollment_changed": p.signals.biometricEnrollmentChanged = value
                case "logout": p.signals.logout = value
                default: p.signals.refreshTokenInvalid = value
                }
            }
        }
        // device
        if let node = top["device"],
            let f = r.fields(node, path: "device", allowed: sectionKeys["device", default: []])
        {
            record("device", node)
            if let v = f["bind_session"] {
                p.device.bindSession = r.bool(v, "device.bind_session") ?? true; record("device.bind_session", v)
            }
            if let v = f["single_user"] { p.device.singleUser = r.bool(v, "device.single_user") ?? true; record("device.single_user", v) }
            if let v = f["clock_rollback"] {
                p.device.clockRollback = reaction(v, "device.clock_rollback") ?? .idpLogin; record("device.clock_rollback", v)
            }
            if let v = f["clock_tolerance"] {
                p.device.clockTolerance = r.duration(v, "device.clock_tolerance") ?? .minutes(5); record("device.clock_tolerance", v)
            }
            if let v = f["compromised"] {
                p.device.compromised = reaction(v, "device.compromised") ?? .wipe; record("device.compromised", v)
            }
        }

        // lint: warnings of `policyctl lint` the policy accepts on purpose
        if let node = top["lint"], let f = r.fields(node, path: "lint", allowed: sectionKeys["lint", default: []]) {
            record("lint", node)
            if let v = f["allow"], let items = r.list(v, "lint.allow") {
                record("lint.allow", v)
                let known = PolicyLinter.lints.map(\.code.rawValue)
                var codes: [DiagnosticCode] = []
                for item in items {
                    guard let word = r.string(item, "lint.allow") else { continue }
                    if word == DiagnosticCode.unusedLintAllow.rawValue {
                        r.error(
                            .invalidValue, "`\(word)` cannot be allowed", at: item,
                            help: "remove the unused entries it reports instead")
                    } else if !known.contains(word) {
                        r.error(
                            .invalidValue, "`\(word)` is not a lint warning", at: item,
                            help: Suggestion.closest(to: word, in: known).map { "did you mean `\($0)`?" }
                                ?? "the lint warnings are listed in docs/diagnostics.md")
                    } else if codes.contains(DiagnosticCode(word)) {
                        r.error(.duplicateValue, "`\(word)` is listed twice in `lint.allow`", at: item, help: "remove the second `\(word)`")
                    } else {
                        p.sources["lint.allow[\(codes.count)]"] = item.location
                        codes.append(DiagnosticCode(word))
                    }
                }
                p.lint.allow = codes
            }
        }

        // What the values mean together: the same checks `CompiledPolicy` runs on a policy built in code.
        // cross_app
        if let node = top["cross_app"], let f = r.fields(node, path: "cross_app", allowed: sectionKeys["cross_app", default: []]) {
            record("cross_app", node)
            if let v = f["adopt"] {
                p.crossApp.adopt = r.keyword(v, "cross_app.adopt", Policy.Adoption.self) ?? .never
                record("cross_app.adopt", v)
            }
            if let v = f["apps"], let items = r.list(v, "cross_app.apps") {
                record("cross_app.apps", v)
                p.crossApp.apps = items.compactMap { r.name($0, "cross_app.apps") }
            }
            if let v = f["reveal_refusal"] {
                p.crossApp.revealRefusal = r.bool(v, "cross_app.reveal_refusal") ?? false
                record("cross_app.reveal_refusal", v)
            }
        }
        // attributes
        if let node = top["attributes"] {
            record("attributes", node)
            if case let .mapping(pairs) = node.kind {
                for (key, value) in pairs {
                    guard let name = key.scalar else { continue }
                    let path = "attributes.\(name)"
                    p.sources[path] = key.location
                    if case let .sequence(items) = value.kind {
                        var words: [String] = []
                        for item in items {
                            guard let w = r.name(item, path) else { continue }
                            if words.contains(w) {
                                r.error(.duplicateValue, "`\(w)` is listed twice in `\(path)`", at: item, help: "remove the second `\(w)`")
                            } else {
                                words.append(w)
                            }
                        }
                        if items.isEmpty {
                            r.error(.invalidValue, "`\(path)` lists no values", at: value, help: "list the words it can take")
                        }
                        p.attributes.append(AttributeDeclaration(name: name, type: .words(words)))
                    } else {
                        let types: [String: AttributeType] = [
                            "version": .version, "boolean": .boolean, "integer": .integer, "duration": .duration, "string": .string,
                        ]
                        guard let word = r.string(value, path) else { continue }
                        guard let type = types[word] else {
                            r.error(
                                .invalidValue, "`\(path)` cannot be `\(word)`", at: value,
                                help: Suggestion.help(for: word, in: types.keys.sorted())
                                    + ", or a list of words such as `[active, revoked]`")
                            continue
                        }
                        p.attributes.append(AttributeDeclaration(name: name, type: type))
                    }
                }
            } else {
                r.error(
                    .wrongType, "`attributes` must be a mapping, found \(node.shapeName)", at: node,
                    help: "write one attribute per line: `license: [active, revoked, none]` or `app_version: version`")
            }
        }
        // rules
        if let node = top["rules"], let items = r.list(node, "rules") {
            record("rules", node)
            for (i, item) in items.enumerated() {
                // Sources are keyed by the rule's position among the rules that load.
                let path = "rules[\(p.rules.count)]"
                let place = "rules[\(i)]"
                guard let f = r.fields(item, path: place, allowed: ruleKeys) else { continue }
                p.sources[path] = item.location
                let name = r.require(f, "name", help: "give the rule a name, used in explanations").flatMap { r.name($0, f.path("name")) }
                var on: [EventKind] = [.launch, .resume]
                if let v = f["on"], let list = r.list(v, f.path("on")) {
                    p.sources["\(path).on"] = v.location
                    on = []
                    for (j, e) in list.enumerated() {
                        if let k = r.keyword(e, f.path("on"), EventKind.self) {
                            p.sources["\(path).on[\(j)]"] = e.location
                            on.append(k)
                        }
                    }
                }
                var when: String?
                if let v = r.require(f, "when", help: "say when the rule applies, for example `when: license == revoked`") {
                    when = r.string(v, f.path("when"))
                    if case let .scalar(text, plain) = v.kind {
                        // Point at the first character of the condition (after a quote).
                        var loc = v.location
                        if !plain, !text.contains("\n") { loc.column += 1 }
                        p.sources["\(path).when"] = loc
                    }
                }
                var outcome: Rule.Outcome?
                if let v = r.require(f, "then", help: "say what happens, for example `then: { decision: wipe, reason: no_license }`"),
                    let tf = r.fields(
                        v, path: f.path("then"), allowed: ruleOutcomeKeys)
                {
                    p.sources["\(path).then"] = v.location
                    var decision: Decision?
                    if let d = tf["decision"] {
                        p.sources["\(path).then.decision"] = d.location
                        decision = r.keyword(d, tf.path("decision"), Decision.self)
                    }
                    var readOnly = false
                    if let st = tf["state"] {
                        p.sources["\(path).then.state"] = st.location
                        readOnly = r.keyword(st, tf.path("state"), MachineState.self, allowed: [.readOnly]) == .readOnly
                    }
                    let reason = r.require(tf, "reason", help: "give a machine-readable reason such as `no_license`")
                        .flatMap { r.name($0, tf.path("reason")) }
                    let message = tf["message"].flatMap { r.string($0, tf.path("message")) }
                    var notices = Notices()
                    if let n = tf["notices"], let list = r.list(n, tf.path("notices")) {
                        for item in list {
                            guard let w = r.name(item, tf.path("notices")) else { continue }
                            if let notice = Notices(name: w) {
                                notices.insert(notice)
                            } else {
                                r.error(
                                    .invalidValue, "unknown notice `\(w)`", at: item,
                                    help: Suggestion.help(for: w, in: Notices.named.map(\.0)))
                            }
                        }
                    }
                    let delay = tf["notice_delay"].flatMap { r.duration($0, tf.path("notice_delay")) }
                    if tf["decision"] == nil, tf["state"] == nil {
                        r.error(
                            .missingKey, "`\(tf.path(""))` needs `decision` or `state`", at: v,
                            help: "for example `decision: wipe`, or `state: read_only`")
                    }
                    if let reason {
                        outcome = Rule.Outcome(
                            decision: decision, reason: Reason(reason), message: message, notices: notices,
                            noticeDelay: delay, readOnly: readOnly)
                    }
                }
                if let name, let when, let outcome {
                    p.rules.append(Rule(name: name, on: on, when: when, then: outcome))
                }
            }
        }
        // Values that did not read keep their (valid) defaults, so this adds no noise; a missing
        // name was reported above.
        if p.name.isEmpty { p.name = "unnamed" }
        let (validated, problems) = PolicyValidator.validate(p)
        for d in problems { r.report(d) }
        let diagnostics = r.diagnostics.sortedForOutput()
        return (diagnostics.hasErrors ? nil : validated, diagnostics)
    }
}
