import SessionPolicy

// Concrete sessions and events: an abstract session and a choice of facts made into the
// engine's own inputs, at one point of a zone. Every evaluation and every counterexample step
// is built here.
extension Explorer {
    /// The discrete part of a session.
    func key(_ s: SessionState) -> SessionKey {
        SessionKey(
            state: s.state, authMode: s.authMode, readOnly: s.readOnly, biometricLocked: s.biometricLocked,
            hasUser: s.user != nil, hasDevice: s.device != nil,
            failures: SIMD4(
                Int32(min(s.failures.biometric, failureCap)), Int32(min(s.failures.offlineLogin, failureCap)),
                Int32(min(s.failures.idpLogin, failureCap)), 0),
            times: (s.lastIdPLogin == nil ? 0 : 1 << 1) | (s.lastOnline == nil ? 0 : 1 << 2) | (s.lastActivity == nil ? 0 : 1 << 3)
                | (s.highestTime == nil ? 0 : 1 << 4))
    }

    static func times(_ s: SessionState) -> [(Zone.Clock, Int64)] {
        var out: [(Zone.Clock, Int64)] = []
        if let t = s.lastIdPLogin { out.append((.lastIdPLogin, t.millisecondsSinceEpoch)) }
        if let t = s.lastOnline { out.append((.lastOnline, t.millisecondsSinceEpoch)) }
        if let t = s.lastActivity { out.append((.lastActivity, t.millisecondsSinceEpoch)) }
        if let t = s.highestTime { out.append((.highestTime, t.millisecondsSinceEpoch)) }
        return out
    }

    static func highest(_ s: SessionState) -> Int64? { times(s).map(\.1).max() }

    static let sessionUser = "alice"

    static let otherUser = "mallory"

    static let sessionDevice = "device-1"

    static let otherDevice = "device-2"

    /// A session with the key's discrete part and the ages as its times (relative to `now`).
    func concrete(_ k: SessionKey, _ ages: Ages) -> SessionState {
        var s = SessionState()
        s.state = k.state
        s.authMode = k.authMode
        s.readOnly = k.readOnly
        s.biometricLocked = k.biometricLocked
        s.user = k.hasUser ? Self.sessionUser : nil
        s.device = k.hasDevice ? Self.sessionDevice : nil
        s.failures = .init(biometric: Int(k.failures[0]), offlineLogin: Int(k.failures[1]), idpLogin: Int(k.failures[2]))
        func at(_ c: Zone.Clock) -> Timestamp? {
            k.has(c) ? Timestamp(millisecondsSinceEpoch: Self.now - (ages[c] ?? 0)) : nil
        }
        s.lastIdPLogin = at(.lastIdPLogin)
        s.lastOnline = at(.lastOnline)
        s.lastActivity = at(.lastActivity)
        s.highestTime = at(.highestTime)
        return s
    }

    /// The concrete event of a choice, for a session (users and devices named relative to it).
    func event(_ c: EventChoice, at time: Timestamp, for s: SessionState) -> Event {
        func name(_ r: Relation, _ current: String?, _ first: String, _ second: String) -> String? {
            switch r {
            case .none: return nil
            case .same: return current ?? first
            case .other: return current == first ? second : (current == nil ? second : first)
            }
        }
        var e = Event(
            c.kind, at: time, network: c.network, user: name(c.user, s.user, Self.sessionUser, Self.otherUser),
            device: .init(
                id: name(c.device, s.device, Self.sessionDevice, Self.otherDevice), keystore: c.keystore,
                integrity: c.integrity),
            authMode: c.authMode, cause: c.cause, unsyncedItems: c.unsyncedItems, attributes: c.attributes)
        e.appID = c.appID
        return e
    }

    /// The facts varied for `kind` in `state`: those a guard of that pair reads, those a session
    /// is established from, and those the kind requires (each also absent, which the engine refuses).
    /// A fact no guard of the pair reads cannot change which transition decides.
    ///
    /// The attributes user properties name on the pair are varied too (`representatives`).
    static func eventChoices(_ machines: [StateMachine], _ state: MachineState, _ kind: EventKind, watch: Watch) -> [EventChoice] {
        do {
            let m = machines[0]
            var reads: Set<String> = ["network"]
            var attributes: [String: [String?]] = [:]
            for machine in machines {
                for t in machine.transitions(from: state, on: kind) {
                    reads.formUnion(Self.reads(t.guard, machine, &attributes))
                    if t.action.effects.contains(.establish) { reads.formUnion(["user", "device", "authMode"]) }
                }
            }
            let required = Set(kind.requiredFacts.facts.map { "\($0)" })
            reads.formUnion(required)
            func values<T>(_ fact: String, _ all: [T]) -> [T?] { reads.contains(fact) ? [nil] + all.map { $0 } : [nil] }
            let networks: [Network?] = [.online, .offline, nil]
            let users: [Relation] = reads.contains("user") ? [.none, .same, .other] : [.none]
            let devices: [Relation] = reads.contains("device") ? [.none, .same, .other] : [.same]
            let keystores: [Keystore?] = reads.contains("keystore") ? [.hardware, .software, nil] : [.hardware]
            let integrities: [Integrity?] = reads.contains("integrity") ? [.ok, .compromised, nil] : [.ok]
            let modes = values("authMode", AuthMode.allCases)
            let causes = values("cause", RefreshFailureCause.allCases)
            let unsynced: [Int?] = reads.contains("unsyncedItems") ? [nil, 0, 1] : [nil]
            let apps: [String?] = reads.contains("appID") ? [nil, m.trustedApps.first ?? "trusted.app", "untrusted.app"] : [nil]
            for (name, named) in (watch.values[StateEvent(state: state, kind: kind)] ?? [:]).sorted(by: { $0.key < $1.key }) {
                guard let type = watch.attributes[ExactName(name)] else { continue }
                var rules: [Condition] = []
                for machine in machines {
                    for t in machine.transitions(from: state, on: kind) {
                        for i in Self.rules(t.guard) { rules += Self.comparisons(machine.rules[i].condition, on: name) }
                    }
                }
                attributes[name] = Self.representatives(attributes[name] ?? [nil], named: named, type: type, rules: rules)
            }
            var attributeSets: [[String: String]] = [[:]]
            for (name, candidates) in attributes.sorted(by: { $0.key < $1.key }) {
                attributeSets = attributeSets.flatMap { base in
                    candidates.map { v -> [String: String] in
                        var b = base
                        b[name] = v
                        return b
                    }
                }
            }
            var list: [EventChoice] = []
            for n in networks {
                for u in users {
                    for d in devices {
                        for k in keystores {
                            for i in integrities {
                                for a in modes {
                                    for c in causes {
                                        for x in unsynced {
                                            for app in apps {
                                                for attrs in attributeSets {
                                                    list.append(
                                                        EventChoice(
                                                            kind: kind, network: n, user: u, device: d, keystore: k,
                                                            integrity: i, authMode: a, cause: c, unsyncedItems: x, appID: app,
                                                            attributes: attrs))
                                                }
                                            }
                                        }
                                    }
                                }
                            }
                        }
                    }
                }
            }
            // An event missing a fact its kind requires is refused before any guard, whatever
            // else it carries: one such event per missing fact is enough.
            func missing(_ c: EventChoice) -> String? {
                if required.contains("network") && c.network == nil { return "network" }
                if required.contains("user") && c.user == .none { return "user" }
                if required.contains("authMode") && c.authMode == nil { return "authMode" }
                if required.contains("cause") && c.cause == nil { return "cause" }
                if required.contains("appID") && c.appID == nil { return "appID" }
                return nil
            }
            var refused: Set<String> = []
            return list.filter { c in missing(c).map { refused.insert($0).inserted } ?? true }
        }
    }

    /// The rules a guard tries, by index.
    static func rules(_ g: Guard) -> [Int] {
        switch g {
        case let .rule(i), let .ruleFactMissing(i): return [i]
        case let .switched(_, inner): return rules(inner)
        default: return []
        }
    }

    /// The event facts a guard reads; attribute candidates (the boundaries of the rules'
    /// comparisons, and absent) go into `attributes`.
    static func reads(_ g: Guard, _ m: StateMachine, _ attributes: inout [String: [String?]]) -> Set<String> {
        switch g {
        case .deviceCompromised: return ["integrity"]
        case .differentDevice: return ["device"]
        case .differentUser: return ["user"]
        case .keystoreNotHardware: return ["keystore"]
        case .networkOffline: return ["network"]
        case .refreshCause: return ["cause"]
        case .unsyncedItems: return ["unsyncedItems"]
        case .appNotTrusted: return ["appID"]
        case let .rule(i), let .ruleFactMissing(i):
            return conditionReads(m.rules[i].condition, m, &attributes)
        case let .switched(kind, inner):
            return reads(kind.trigger, m, &attributes).union(reads(inner, m, &attributes))
        default: return []
        }
    }

    static func conditionReads(_ c: Condition, _ m: StateMachine, _ attributes: inout [String: [String?]]) -> Set<String> {
        func fact(_ f: Fact, _ candidates: [String]) -> Set<String> {
            switch f {
            case .network: return ["network"]
            case .keystore: return ["keystore"]
            case .integrity: return ["integrity"]
            case let .attribute(name):
                var list = attributes[name] ?? [nil]
                var values = candidates
                switch m.attributes.first(where: { $0.name == name })?.type {
                case let .words(words)?: values = words  // any other word is refused as the wrong type
                case .boolean?: values = ["true", "false"]
                default: break
                }
                for v in values where !list.contains(v) { list.append(v) }
                attributes[name] = list
                return []
            default: return []
            }
        }
        switch c {
        case let .oneOf(f, values, _): return fact(f, values + ["zz-other"])
        case let .number(f, _, v):
            if case let .attribute(name) = f, case .duration = m.attributes.first(where: { $0.name == name })?.type {
                let s = v / 1000
                return fact(f, [max(s - 1, 0), s, s + 1].map { "\($0)s" })
            }
            return fact(f, [v - 1, v, v + 1].map { "\($0)" })
        case let .version(f, _, v):
            let text = v.parts.map(String.init).joined(separator: ".")
            var lower = v.parts
            if let i = lower.lastIndex(where: { $0 > 0 }) { lower[i] -= 1 }
            return fact(f, [text, text + ".1", lower.map(String.init).joined(separator: ".")])
        case let .and(a, b), let .or(a, b): return conditionReads(a, m, &attributes).union(conditionReads(b, m, &attributes))
        case let .not(a): return conditionReads(a, m, &attributes)
        }
    }
}
