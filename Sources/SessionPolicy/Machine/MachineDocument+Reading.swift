package import Foundation

extension MachineDocument {
    /// Every code a machine document can be refused with (docs/machine-format.md, "What the reader
    /// refuses"): the JSON reader's, then the document reader's. spec/vocabulary.json's
    /// `document_codes`, which the Java and JavaScript runtimes hold their own lists against.
    package static let refusalCodes: [DiagnosticCode] = [
        .invalidJSON, .invalidUTF8, .unsupportedEncoding, .inputTooLarge, .nestingTooDeep, .tooManyNodes, .duplicateKey,
        .emptyDocument, .wrongType, .missingKey, .unknownKey, .invalidValue, .unsupportedFormat, .digestMismatch,
        .inconsistentMachine,
    ]

    /// Reads a machine document: refuses another format, a digest that does not match the
    /// document, and a machine this engine cannot run as written (an unknown state, event, guard
    /// or effect; transitions out of order; a (state, event) pair without a final `always`; a
    /// rule that does not exist), each a located diagnostic.
    package static func read(
        _ bytes: Data, file: String
    ) -> Result<(machine: StateMachine, digest: String, source: String?), DiagnosticError> {
        let root: SyntaxNode
        switch JSONSyntax.parse(bytes, file: file, limits: .files) {
        case let .failure(e): return .failure(e)
        case .success(nil):
            return .failure(
                DiagnosticError([
                    .error(
                        .emptyDocument, "the machine document is empty", at: SourceLocation(file: file, line: 1, column: 1),
                        help: "write one with `policyctl compile POLICY --format machine`")
                ]))
        case let .success(node?): root = node
        }
        do {
            return .success(try Reader(file: file).machine(root))
        } catch let e as Problem {
            return .failure(DiagnosticError([e.diagnostic]))
        } catch {
            return .failure(DiagnosticError([.error(.invalidValue, "the machine document cannot be read", at: root.location)]))
        }
    }

    struct Problem: Error {
        var diagnostic: Diagnostic
    }

    /// Walks the document's syntax tree; throws the first problem.
    struct Reader {
        let file: String

        func fail(_ n: SyntaxNode, _ code: DiagnosticCode, _ message: String, help: String? = nil) -> Problem {
            Problem(diagnostic: .error(code, message, at: n.location, help: help))
        }

        /// The members of an object with exactly `keys` (every key required; `null` where absent).
        func object(_ n: SyntaxNode, _ what: String, _ keys: [String]) throws -> [String: SyntaxNode] {
            guard case let .mapping(pairs) = n.kind else {
                throw fail(n, .wrongType, "\(what) must be an object, found \(n.shapeName)")
            }
            var out: [String: SyntaxNode] = [:]
            for (k, v) in pairs {
                let key = k.scalar ?? ""
                guard keys.contains(key) else {
                    throw fail(
                        k, .unknownKey, "unknown key `\(key)` in \(what)",
                        help: Suggestion.closest(to: key, in: keys).map { "did you mean `\($0)`?" })
                }
                out[key] = v
            }
            for k in keys where out[k] == nil {
                throw fail(n, .missingKey, "\(what) has no `\(k)`", help: "every key of \(what) is written, `null` where it has no value")
            }
            return out
        }

        func string(_ n: SyntaxNode, _ what: String) throws -> String {
            guard case let .scalar(s, plain) = n.kind, !plain else {
                throw fail(n, .wrongType, "\(what) must be a string, found \(n.shapeName)")
            }
            return s
        }

        func optionalString(_ n: SyntaxNode, _ what: String) throws -> String? { n.isNull ? nil : try string(n, what) }

        func int(_ n: SyntaxNode, _ what: String) throws -> Int64 {
            guard case let .scalar(s, plain) = n.kind, plain, let v = Int64(s) else {
                throw fail(
                    n, .wrongType, "\(what) must be an integer, found \(n.shapeName == "a scalar" ? "`\(n.scalar ?? "")`" : n.shapeName)")
            }
            return v
        }

        func bool(_ n: SyntaxNode, _ what: String) throws -> Bool {
            guard case let .scalar(s, plain) = n.kind, plain, s == "true" || s == "false" else {
                throw fail(n, .wrongType, "\(what) must be `true` or `false`")
            }
            return s == "true"
        }

        func array(_ n: SyntaxNode, _ what: String) throws -> [SyntaxNode] {
            guard case let .sequence(items) = n.kind else { throw fail(n, .wrongType, "\(what) must be a list, found \(n.shapeName)") }
            return items
        }

        func keyword<K: PolicyKeyword>(_ n: SyntaxNode, _ what: String, _ type: K.Type = K.self) throws -> K {
            let s = try string(n, what)
            guard let k = K(rawValue: s) else {
                let names = K.allCases.map(\.rawValue)
                throw fail(
                    n, .invalidValue, "unknown \(what) `\(s)`",
                    help: Suggestion.closest(to: s, in: names).map { "did you mean `\($0)`?" } ?? "one of \(names.joined(separator: ", "))")
            }
            return k
        }

        func machine(_ root: SyntaxNode) throws -> (machine: StateMachine, digest: String, source: String?) {
            guard case let .mapping(pairs) = root.kind else {
                throw fail(root, .wrongType, "a machine document must be an object, found \(root.shapeName)")
            }
            // The format first: a document of another version is refused whatever else it holds.
            guard let formatNode = pairs.first(where: { $0.key.scalar == "format" })?.value else {
                throw fail(root, .missingKey, "the document has no `format`", help: "a machine document starts `{\"format\":\"\(format)\"`")
            }
            let given = try string(formatNode, "`format`")
            guard given == format else {
                throw fail(
                    formatNode, .unsupportedFormat, "this engine reads `\(format)`, not `\(given)`",
                    help: "compile the policy again with this version's `policyctl compile --format machine`")
            }
            let m = try object(
                root, "the machine document",
                [
                    "format", "digest", "name", "description", "source", "states", "events", "transitions", "rules", "attributes",
                    "trusted_apps", "reveal_refusal", "scopes", "levers",
                ])
            let digestGiven = try string(m["digest"]!, "`digest`")
            let received = try canonical(root)
            let digestFound = MachineDocument.digest(of: received)
            guard digestGiven == digestFound else {
                throw fail(
                    m["digest"]!, .digestMismatch, "the document's digest is `\(digestGiven)`, its content's `\(digestFound)`",
                    help: "the document was changed after it was written, or arrived incomplete: fetch or compile it again")
            }
            let source = try optionalString(m["source"]!, "`source`") ?? file
            func location(_ n: SyntaxNode) throws -> SourceLocation? {
                if n.isNull { return nil }
                let l = try object(n, "a location", ["line", "column"])
                return SourceLocation(
                    file: source, line: Int(try int(l["line"]!, "`line`")), column: Int(try int(l["column"]!, "`column`")))
            }
            // The vocabulary is this engine's: a machine that names another is not one it can run.
            let states = try array(m["states"]!, "`states`").map { try string($0, "a state") }
            guard states == MachineState.allCases.map(\.rawValue) else {
                throw fail(
                    m["states"]!, .inconsistentMachine, "the machine's states are not this engine's",
                    help: "this engine has \(MachineState.allCases.map(\.rawValue).joined(separator: ", "))")
            }
            let events = try array(m["events"]!, "`events`").map { try string($0, "an event") }
            guard events == EventKind.allCases.map(\.rawValue) else {
                throw fail(
                    m["events"]!, .inconsistentMachine, "the machine's events are not this engine's",
                    help: "this engine has \(EventKind.allCases.map(\.rawValue).joined(separator: ", "))")
            }
            let attributes = try array(m["attributes"]!, "`attributes`").map(attribute)
            let rules = try array(m["rules"]!, "`rules`").map { try rule($0, attributes) }
            let transitionNodes = try array(m["transitions"]!, "`transitions`")
            var transitions: [Transition] = []
            for (i, n) in transitionNodes.enumerated() {
                let t = try object(n, "a transition", ["id", "from", "event", "guard", "action", "levers", "location"])
                guard try int(t["id"]!, "`id`") == Int64(i) else {
                    throw fail(
                        t["id"]!, .inconsistentMachine, "transition \(i) has id \(try int(t["id"]!, "`id`"))",
                        help: "ids are the positions in `transitions`, from 0")
                }
                let g = try guardValue(t["guard"]!, rules: rules.count)
                transitions.append(
                    Transition(
                        id: i, from: try keyword(t["from"]!, "state"), event: try keyword(t["event"]!, "event"), guard: g,
                        action: try action(t["action"]!),
                        source: TransitionSource(
                            levers: try array(t["levers"]!, "`levers`").map { try string($0, "a lever") },
                            location: try location(t["location"]!))))
            }
            let scopes = try object(m["scopes"]!, "`scopes`", ["none", "none_hardware", "biometric", "biometric_hardware"])
            var levers: [String: SourceLocation] = [:]
            guard case let .mapping(leverPairs) = m["levers"]!.kind else {
                throw fail(m["levers"]!, .wrongType, "`levers` must be an object")
            }
            for (k, v) in leverPairs { levers[k.scalar ?? ""] = try location(v) }
            let machine = StateMachine(
                name: try string(m["name"]!, "`name`"), description: try optionalString(m["description"]!, "`description`"),
                unordered: transitions, rules: rules, attributes: attributes,
                trustedApps: try array(m["trusted_apps"]!, "`trusted_apps`").map { try string($0, "an app id") },
                revealsDetectionRefusal: try bool(m["reveal_refusal"]!, "`reveal_refusal`"),
                scopes: ScopeTable(
                    unprotected: try keyword(scopes["none"]!, "scope"), unprotectedHardware: try keyword(scopes["none_hardware"]!, "scope"),
                    biometric: try keyword(scopes["biometric"]!, "scope"),
                    biometricHardware: try keyword(scopes["biometric_hardware"]!, "scope")),
                sources: levers)
            // Grouped by (state, event) in the engine's order, each group ending in `always`:
            // else some event would fall through, or be decided by another transition than written.
            for (i, t) in machine.transitions.enumerated() where t.from != transitions[i].from || t.event != transitions[i].event {
                throw fail(
                    transitionNodes[i], .inconsistentMachine, "transition \(i) is out of order",
                    help: "transitions are grouped by state, then event, in the order of `states` and `events`")
            }
            for s in MachineState.allCases {
                for e in EventKind.allCases {
                    let r = machine.range(from: s, on: e)
                    guard let last = r.last, machine.transitions[last].guard == .always else {
                        throw fail(
                            m["transitions"]!, .inconsistentMachine,
                            "no transition decides `\(e.rawValue)` in `\(s.rawValue)` whatever the facts",
                            help: "every (state, event) group ends with a transition whose guard is `always`")
                    }
                }
            }
            // Written back, the machine must be the document: else this engine read something
            // other than what was written (a member it does not keep, a list in another order).
            let documentSource = try optionalString(m["source"]!, "`source`")
            let written = MachineDocument.value(of: machine, source: documentSource)
            guard written == received else {
                throw fail(
                    root, .inconsistentMachine, "the document is not the machine this engine reads from it",
                    help: "write the document with `policyctl compile --format machine`; do not edit it by hand")
            }
            return (machine, digestFound, documentSource)
        }

        func action(_ n: SyntaxNode) throws -> Action {
            let a = try object(
                n, "an action",
                [
                    "decision", "reason", "message", "target", "effects", "notices", "names_scope", "uses_previous_auth_mode",
                    "notice_delay_seconds",
                ])
            let targetName = try string(a["target"]!, "`target`")
            let target: Target
            switch targetName {
            case "resting": target = .resting
            case "unchanged": target = .unchanged
            default: target = .state(try keyword(a["target"]!, "target state"))
            }
            var effects: Effects = []
            for e in try array(a["effects"]!, "`effects`") {
                let name = try string(e, "an effect")
                guard let fx = MachineDocument.effects.first(where: { $0.0 == name }) else {
                    throw fail(
                        e, .invalidValue, "unknown effect `\(name)`",
                        help: Suggestion.closest(to: name, in: MachineDocument.effects.map(\.0)).map { "did you mean `\($0)`?" })
                }
                effects.insert(fx.1)
            }
            var notices: Notices = []
            for x in try array(a["notices"]!, "`notices`") {
                let name = try string(x, "a notice")
                guard let notice = Notices(name: name) else { throw fail(x, .invalidValue, "unknown notice `\(name)`") }
                notices.insert(notice)
            }
            let delay = a["notice_delay_seconds"]!
            return Action(
                decision: a["decision"]!.isNull ? nil : try keyword(a["decision"]!, "decision") as Decision,
                reason: Reason(try string(a["reason"]!, "`reason`")), target: target, effects: effects, notices: notices,
                namesScope: try bool(a["names_scope"]!, "`names_scope`"),
                usesPreviousAuthMode: try bool(a["uses_previous_auth_mode"]!, "`uses_previous_auth_mode`"),
                noticeDelay: delay.isNull ? nil : try seconds(delay, "`notice_delay_seconds`"),
                message: try string(a["message"]!, "`message`"))
        }

        func nonNegative(_ n: SyntaxNode, _ what: String) throws -> Int64 {
            let v = try int(n, what)
            guard v >= 0 else { throw fail(n, .invalidValue, "\(what) cannot be negative") }
            return v
        }

        /// A duration in seconds: not negative and at most `TimeSpan.maximum`, as a policy's are
        /// (so the engine's millisecond arithmetic cannot overflow).
        func seconds(_ n: SyntaxNode, _ what: String) throws -> TimeSpan {
            let v = try nonNegative(n, what)
            guard v <= TimeSpan.maximum.seconds else {
                throw fail(n, .invalidValue, "\(what) is \(v) seconds, more than the longest duration a policy may set (36600 days)")
            }
            return TimeSpan(seconds: v)
        }

        func guardValue(_ n: SyntaxNode, rules: Int) throws -> Guard {
            guard case let .mapping(pairs) = n.kind, let kindNode = pairs.first(where: { $0.key.scalar == "kind" })?.value else {
                throw fail(n, .wrongType, "a guard must be an object with a `kind`")
            }
            let kind = try string(kindNode, "a guard's `kind`")
            func only(_ keys: [String]) throws -> [String: SyntaxNode] { try object(n, "guard `\(kind)`", ["kind"] + keys) }
            func span(_ key: String) throws -> TimeSpan { try seconds(try only([key])[key]!, "`\(key)`") }
            func ruleIndex() throws -> Int {
                let node = try only(["rule"])["rule"]!
                let i = try int(node, "`rule`")
                guard i >= 0, i < Int64(rules) else {
                    throw fail(node, .inconsistentMachine, "guard `\(kind)` names rule \(i), which does not exist")
                }
                return Int(i)
            }
            switch kind {
            case "always": _ = try only([]); return .always
            case "device_compromised": _ = try only([]); return .deviceCompromised
            case "clock_rolled_back": return .clockRolledBack(tolerance: try span("tolerance_seconds"))
            case "different_user": _ = try only([]); return .differentUser
            case "different_device": _ = try only([]); return .differentDevice
            case "session_max_exceeded": return .sessionMaxExceeded(try span("limit_seconds"))
            case "idle_exceeded": return .idleExceeded(try span("limit_seconds"))
            case "offline_window_exceeded": return .offlineWindowExceeded(try span("limit_seconds"))
            case "auth_mode_missing": _ = try only([]); return .authModeMissing
            case "auth_mode_needs_idp": _ = try only([]); return .authModeNeedsIdP
            case "auth_mode_not_offline":
                let modes = try array(try only(["modes"])["modes"]!, "`modes`").map { try keyword($0, "auth mode") as AuthMode }
                return .authModeNotOffline(AuthModeSet(modes))
            case "keystore_not_hardware": _ = try only([]); return .keystoreNotHardware
            case "biometric_locked": _ = try only([]); return .biometricLocked
            case "auth_mode_is": return .authModeIs(try keyword(try only(["mode"])["mode"]!, "auth mode"))
            case "failure_limit_reached":
                let g = try only(["path", "limit"])
                let pathName = try string(g["path"]!, "`path`")
                guard let path = FailurePath(rawValue: pathName) else {
                    throw fail(g["path"]!, .invalidValue, "unknown failure path `\(pathName)`")
                }
                let limit = try int(g["limit"]!, "`limit`")
                guard limit >= 1, limit <= Int64(Int32.max) else { throw fail(g["limit"]!, .invalidValue, "`limit` must be at least 1") }
                return .failureLimitReached(path, limit: Int(limit))
            case "network_offline": _ = try only([]); return .networkOffline
            case "refresh_cause": return .refreshCause(try keyword(try only(["cause"])["cause"]!, "refresh failure cause"))
            case "unsynced_items": _ = try only([]); return .unsyncedItems
            case "app_not_trusted": _ = try only([]); return .appNotTrusted
            case "rule_fact_missing": return .ruleFactMissing(try ruleIndex())
            case "rule": return .rule(try ruleIndex())
            case "switched":
                let g = try only(["switch", "inner"])
                let name = try string(g["switch"]!, "`switch`")
                guard let s = SessionSwitch(rawValue: name) else { throw fail(g["switch"]!, .invalidValue, "unknown switch `\(name)`") }
                let inner = try guardValue(g["inner"]!, rules: rules)
                if case .switched = inner { throw fail(g["inner"]!, .inconsistentMachine, "a switched guard cannot hold another") }
                return .switched(s, inner)
            default:
                throw fail(
                    kindNode, .invalidValue, "unknown guard `\(kind)`",
                    help: "this engine reads the guards of `\(format)` (docs/machine-format.md)")
            }
        }

        func attribute(_ n: SyntaxNode) throws -> AttributeDeclaration {
            let a = try object(n, "an attribute", ["name", "type"])
            guard case let .mapping(pairs) = a["type"]!.kind, let k = pairs.first(where: { $0.key.scalar == "kind" })?.value else {
                throw fail(a["type"]!, .wrongType, "an attribute's `type` must be an object with a `kind`")
            }
            let kind = try string(k, "`kind`")
            let type: AttributeType
            switch kind {
            case "words":
                type = .words(
                    try array(try object(a["type"]!, "type `words`", ["kind", "words"])["words"]!, "`words`").map {
                        try string($0, "a word")
                    })
            case "version", "boolean", "integer", "duration", "string":
                _ = try object(a["type"]!, "type `\(kind)`", ["kind"])
                type =
                    [.version, .boolean, .integer, .duration, .string][
                        ["version", "boolean", "integer", "duration", "string"].firstIndex(of: kind)!]
            default: throw fail(k, .invalidValue, "unknown attribute type `\(kind)`")
            }
            return AttributeDeclaration(name: try string(a["name"]!, "`name`"), type: type)
        }

        func rule(_ n: SyntaxNode, _ attributes: [AttributeDeclaration]) throws -> CompiledRule {
            let r = try object(n, "a rule", ["name", "on", "condition", "text"])
            return CompiledRule(
                name: try string(r["name"]!, "`name`"), on: try array(r["on"]!, "`on`").map { try keyword($0, "event") },
                condition: try condition(r["condition"]!, attributes), text: try string(r["text"]!, "`text`"))
        }

        func condition(_ n: SyntaxNode, _ attributes: [AttributeDeclaration]) throws -> Condition {
            guard case let .mapping(pairs) = n.kind, let opNode = pairs.first(where: { $0.key.scalar == "op" })?.value else {
                throw fail(n, .wrongType, "a condition must be an object with an `op`")
            }
            let op = try string(opNode, "`op`")
            func fact(_ c: [String: SyntaxNode]) throws -> Fact {
                if let a = c["attribute"] {
                    let name = try string(a, "`attribute`")
                    guard attributes.contains(where: { $0.name.isExactly(name) }) else {
                        throw fail(a, .inconsistentMachine, "the condition reads attribute `\(name)`, which the machine does not declare")
                    }
                    return .attribute(name)
                }
                let name = try string(c["fact"]!, "`fact`")
                guard let f = Fact.builtIn.first(where: { $0.0 == name }) else {
                    throw fail(
                        c["fact"]!, .invalidValue, "unknown fact `\(name)`",
                        help: Suggestion.closest(to: name, in: Fact.builtInNames).map { "did you mean `\($0)`?" })
                }
                return f.1
            }
            func factKey() -> String { pairs.contains(where: { $0.key.scalar == "attribute" }) ? "attribute" : "fact" }
            func comparison(_ node: SyntaxNode) throws -> Expression.Comparison {
                let s = try string(node, "`comparison`")
                guard let c = Expression.Comparison(rawValue: s), c != .isIn else {
                    throw fail(node, .invalidValue, "unknown comparison `\(s)`")
                }
                return c
            }
            switch op {
            case "one_of":
                let c = try object(n, "condition `one_of`", ["op", factKey(), "values", "negated"])
                return .oneOf(
                    try fact(c), try array(c["values"]!, "`values`").map { try string($0, "a value") },
                    negated: try bool(c["negated"]!, "`negated`"))
            case "compare":
                let c = try object(n, "condition `compare`", ["op", factKey(), "comparison", "value"])
                return .number(try fact(c), try comparison(c["comparison"]!), try int(c["value"]!, "`value`"))
            case "compare_version":
                let c = try object(n, "condition `compare_version`", ["op", factKey(), "comparison", "value"])
                let text = try string(c["value"]!, "`value`")
                guard let v = Version(text) else { throw fail(c["value"]!, .invalidValue, "`\(text)` is not a version") }
                return .version(try fact(c), try comparison(c["comparison"]!), v)
            case "and", "or":
                let c = try object(n, "condition `\(op)`", ["op", "left", "right"])
                let (l, r) = (try condition(c["left"]!, attributes), try condition(c["right"]!, attributes))
                return op == "and" ? .and(l, r) : .or(l, r)
            case "not":
                return .not(try condition(try object(n, "condition `not`", ["op", "operand"])["operand"]!, attributes))
            default:
                throw fail(
                    opNode, .invalidValue, "unknown condition `\(op)`", help: "one of one_of, compare, compare_version, and, or, not")
            }
        }

        /// The document as a canonical value: strings as written, integers as numbers; any
        /// other number (a fraction, an exponent) is not one this format writes.
        func canonical(_ n: SyntaxNode) throws -> CanonicalJSON {
            switch n.kind {
            case let .scalar(s, plain):
                if !plain { return .string(s) }
                switch s {
                case "null": return .null
                case "true": return .bool(true)
                case "false": return .bool(false)
                default:
                    guard let v = Int64(s) else {
                        throw fail(n, .invalidValue, "`\(s)` is not an integer; a machine document holds integers only")
                    }
                    return .int(v)
                }
            case let .sequence(items): return .array(try items.map(canonical))
            case let .mapping(pairs):
                var out: [String: CanonicalJSON] = [:]
                for (k, v) in pairs { out[k.scalar ?? ""] = try canonical(v) }
                return .object(out)
            }
        }
    }
}
