import SessionPolicy
import SessionPolicyCheck
import SessionPolicyTestSupport
import SessionPolicyYAML
import Testing

/// `schemas/*.schema.json` (for editors) must stay in step with the loaders: the same keys,
/// the same closed word sets, and every shipped file valid.
@Suite("JSON Schemas")
struct SchemaTests {
    static func policySchema() throws -> JSONSchema { try JSONSchema(contentsOfFile: Fixtures.path("schemas/policy.schema.json")) }
    static func scenarioSchema() throws -> JSONSchema { try JSONSchema(contentsOfFile: Fixtures.path("schemas/scenario.schema.json")) }

    /// Records what one key list has that the other has not.
    static func expectSameKeys(
        _ schema: JSONValue?, _ loader: [String], _ what: String, sourceLocation: Testing.SourceLocation = #_sourceLocation
    ) {
        guard let schema else {
            Issue.record("\(what): not in the schema", sourceLocation: sourceLocation)
            return
        }
        let keys = schema.keys
        let missing = Set(loader).subtracting(keys).sorted()
        let extra = keys.subtracting(loader).sorted()
        #expect(missing == [], "\(what): keys the loader reads but the schema lacks", sourceLocation: sourceLocation)
        #expect(extra == [], "\(what): keys in the schema the loader refuses", sourceLocation: sourceLocation)
        #expect(loader.count == Set(loader).count, "\(what): the loader lists a key twice", sourceLocation: sourceLocation)
    }

    /// The string members of an enum, and whether it also allows null.
    static func words(_ schema: JSONSchema, _ node: JSONValue?) -> (words: Set<String>, null: Bool) {
        let options = node.map { schema.resolved($0)["enum"]?.items ?? [] } ?? []
        return (Set(options.compactMap(\.string)), options.contains(.null))
    }

    static func raw<K: PolicyKeyword>(_ type: K.Type) -> Set<String> { Set(K.allCases.map(\.rawValue)) }

    // MARK: (a) keys

    @Test("the policy schema has exactly the keys the policy loader reads")
    func policyKeys() throws {
        let s = try Self.policySchema()
        Self.expectSameKeys(s.subschema("properties"), PolicyLoader.topKeys, "top level")
        #expect(
            Set(PolicyLoader.sectionKeys.keys)
                == Set(PolicyLoader.topKeys).subtracting(["version", "name", "description", "attributes", "rules"]))
        for (section, keys) in PolicyLoader.sectionKeys {
            Self.expectSameKeys(s.subschema("properties", section, "properties"), keys, section)
        }
        for path in PolicyLoader.retryPaths {
            Self.expectSameKeys(
                s.subschema("properties", "retry", "properties", path, "properties"), PolicyLoader.retryLimitKeys, "retry.\(path)")
        }
        for key in PolicyLoader.signalKeys {
            let forms = s.subschema("properties", "signals", "properties", key, "oneOf")?.items.map(s.resolved) ?? []
            let long = forms.first { $0["type"] == .string("object") }
            Self.expectSameKeys(long?["properties"], PolicyLoader.signalLongFormKeys, "signals.\(key) (long form)")
        }
    }

    @Test("the scenario schema has exactly the keys the scenario loader reads")
    func scenarioKeys() throws {
        let s = try Self.scenarioSchema()
        Self.expectSameKeys(s.subschema("properties"), ScenarioLoader.fileKeys, "scenario file")
        Self.expectSameKeys(s.subschema("definitions", "scenario", "properties"), ScenarioLoader.scenarioKeys, "scenario")
        Self.expectSameKeys(s.subschema("definitions", "context", "properties"), SyntaxReader.contextKeys, "context")
        Self.expectSameKeys(s.subschema("definitions", "device", "properties"), SyntaxReader.deviceKeys, "device")
        Self.expectSameKeys(s.subschema("definitions", "state", "properties"), SyntaxReader.stateKeys, "state")
        Self.expectSameKeys(
            s.subschema("definitions", "state", "properties", "failures", "properties"), SyntaxReader.failureKeys, "failures")
        Self.expectSameKeys(s.subschema("definitions", "step", "properties"), ScenarioLoader.stepKeys, "step")
        Self.expectSameKeys(
            s.subschema("definitions", "step", "else", "properties"), ["event"] + SyntaxReader.contextKeys, "step (checked event)")
        Self.expectSameKeys(s.subschema("definitions", "expectation", "properties"), ScenarioLoader.expectKeys, "expect")
        // The places that use the shared definitions really do.
        #expect(s.subschema("definitions", "scenario", "properties", "context", "$ref") == .string("#/definitions/context"))
        #expect(s.subschema("definitions", "scenario", "properties", "state", "$ref") == .string("#/definitions/state"))
        #expect(s.subschema("definitions", "step", "else", "properties", "device", "$ref") == .string("#/definitions/device"))
    }

    @Test("every property has a description for hover help", arguments: ["policy", "scenario", "property", "machine"])
    func descriptions(_ kind: String) throws {
        let s = try JSONSchema(contentsOfFile: Fixtures.path("schemas/\(kind).schema.json"))
        var missing: [String] = []
        func walk(_ node: JSONValue, _ at: String) {
            if case let .object(properties)? = node["properties"] {
                for (key, p) in properties {
                    if (p["description"]?.string ?? "").isEmpty { missing.append("\(at)/properties/\(key)") }
                    walk(p, "\(at)/properties/\(key)")
                }
            }
            // An `if` is a condition, not documentation.
            for key in ["items", "then", "else"] { if let sub = node[key] { walk(sub, "\(at)/\(key)") } }
            for key in ["oneOf", "anyOf"] { for (i, sub) in (node[key]?.items ?? []).enumerated() { walk(sub, "\(at)/\(key)/\(i)") } }
            if case let .object(definitions)? = node["definitions"] { for (k, d) in definitions { walk(d, "\(at)/definitions/\(k)") } }
        }
        walk(s.root, "#")
        #expect(missing.sorted() == [])
    }

    @Test("the schemas use only keywords the test validator implements", arguments: ["policy", "scenario", "property", "machine"])
    func keywords(_ kind: String) throws {
        let s = try JSONSchema(contentsOfFile: Fixtures.path("schemas/\(kind).schema.json"))
        #expect(s.unsupportedKeywords() == [])
        #expect(s.root["$schema"] == .string("http://json-schema.org/draft-07/schema#"))
    }

    // MARK: (b) closed word sets

    @Test("the policy schema's word sets are the model's")
    func policyEnums() throws {
        let s = try Self.policySchema()
        #expect(Self.words(s, s.subschema("properties", "offline", "properties", "credential")).words == Self.raw(OfflineCredential.self))
        #expect(Self.words(s, s.subschema("properties", "offline", "properties", "key_protection")).words == Self.raw(KeyProtection.self))
        #expect(
            Self.words(s, s.subschema("properties", "auth_modes", "properties", "offline", "items")).words
                == Set(AuthMode.allCases.filter { !$0.needsIdP }.map(\.rawValue)))
        #expect(Self.words(s, s.subschema("definitions", "reaction")).words == Set(PolicyLoader.endSession.map(\.rawValue)))
        #expect(Self.words(s, s.subschema("definitions", "licenseReaction")).words == Self.raw(Reaction.self))
        // Every reaction lever takes `reaction`; `signals.license_revoked` alone takes `read_only` too.
        let levers = [
            "session.on_expired", "offline.on_expired", "fallback.on_offline_failure", "device.clock_rollback", "device.compromised",
        ]
        for lever in levers {
            let parts = lever.split(separator: ".").map(String.init)
            #expect(s.subschema("properties", parts[0], "properties", parts[1], "$ref") == .string("#/definitions/reaction"), "\(lever)")
        }
        for path in PolicyLoader.retryPaths {
            let then = s.subschema("properties", "retry", "properties", path, "properties", "then")
            #expect(Self.words(s, then).words == Set(PolicyLoader.endSession.map(\.rawValue)), "retry.\(path).then")
        }
        for key in PolicyLoader.signalKeys {
            let expected = key == "license_revoked" ? "#/definitions/licenseSignal" : "#/definitions/signal"
            #expect(s.subschema("properties", "signals", "properties", key, "$ref") == .string(expected), "signals.\(key)")
        }
    }

    @Test("the scenario schema's word sets are the model's")
    func scenarioEnums() throws {
        let s = try Self.scenarioSchema()
        func defined(_ name: String) -> Set<String> { Self.words(s, s.subschema("definitions", name)).words }
        #expect(defined("eventKind") == Self.raw(EventKind.self))
        #expect(defined("machineState") == Self.raw(MachineState.self))
        #expect(defined("network") == Self.raw(Network.self))
        #expect(defined("keystore") == Self.raw(Keystore.self))
        #expect(defined("integrity") == Self.raw(Integrity.self))
        #expect(defined("cause") == Self.raw(RefreshFailureCause.self))
        #expect(defined("authMode") == Self.raw(AuthMode.self))
        #expect(defined("notice") == Set(Notices.named.map(\.0)))
        #expect(defined("behaviour") == Set(Behaviours.all))
        // Editors complete the engine's reasons; a rule's own reason is any name.
        let reason = s.subschema("definitions", "expectation", "properties", "reason", "anyOf")?.items ?? []
        #expect(Self.words(s, reason.first).words == Set(Reason.builtIn.map(\.0.rawValue)))
        #expect(reason.dropFirst().first?["$ref"] == .string("#/definitions/name"))
        // In expectations `none` (or null) says "no decision", "no scope"; null says "no auth mode".
        let expect = { (key: String) in Self.words(s, s.subschema("definitions", "expectation", "properties", key)) }
        #expect(expect("decision").words == Self.raw(Decision.self).union(["none"]))
        #expect(expect("decision").null)
        #expect(expect("scope").words == Self.raw(Scope.self).union(["none"]))
        #expect(expect("scope").null)
        #expect(expect("auth_mode").words == Self.raw(AuthMode.self))
        #expect(expect("auth_mode").null)
        #expect(expect("state").words == Self.raw(MachineState.self))
    }

    @Test("the defaults the policy schema shows are the loader's defaults")
    func policyDefaults() throws {
        let s = try Self.policySchema()
        var document: [String: JSONValue] = ["version": .int(1), "name": .string("defaults")]
        var withoutDefault: [String] = []
        for section in PolicyLoader.sectionKeys.keys {
            var values: [String: JSONValue] = [:]
            let properties = s.subschema("properties", section, "properties") ?? .object([:])
            for key in properties.keys {
                if let d = properties[key]?["default"] { values[key] = d } else { withoutDefault.append("\(section).\(key)") }
            }
            if !values.isEmpty { document[section] = .object(values) }
        }
        // Every lever shows its default, except the limits that have none.
        #expect(withoutDefault.sorted() == ["offline.window", "session.idle", "session.max"])
        // JSON is YAML: load the defaults written out as a policy file.
        let node = try #require(try YAMLSyntax.parse(JSONValue.object(document).description, file: "defaults.json").get())
        let (loaded, diagnostics) = PolicyLoader.load(node)
        #expect(diagnostics.isEmpty, "\(diagnostics)")
        let policy = try #require(loaded).policy
        let defaults = Policy(name: "defaults")
        #expect(policy.session == defaults.session)
        #expect(policy.offline == defaults.offline)
        #expect(policy.authModes == defaults.authModes)
        #expect(policy.retry == defaults.retry)
        #expect(policy.fallback == defaults.fallback)
        #expect(policy.signals == defaults.signals)
        #expect(policy.device == defaults.device)
    }

    // MARK: Wiring

    @Test("every shipped file names its schema in a modeline, and the VS Code settings map the folders")
    func wiring() throws {
        for (folder, schema) in [("policies", "policy"), ("examples", "scenario")] {
            for file in Fixtures.files(in: folder) {
                let first = Fixtures.text(file).split(separator: "\n").first.map(String.init)
                #expect(first == "# yaml-language-server: $schema=../schemas/\(schema).schema.json", "\(file)")
            }
        }
        let settings = try JSONSchema(contentsOfFile: Fixtures.path(".vscode/settings.json")).root
        #expect(
            settings["yaml.schemas"]
                == .object([
                    "./schemas/policy.schema.json": .array([.string("policies/*.yaml")]),
                    "./schemas/scenario.schema.json": .array([.string("examples/*.yaml")]),
                ]))
        #expect(Fixtures.text("docs/editor-support.md").contains(#""./schemas/policy.schema.json": ["policies/*.yaml"]"#))
    }

    // MARK: (c) the shipped files validate; bad ones do not

    static func errors(_ schema: JSONSchema, _ yaml: String) throws -> [String] {
        schema.validate(try #require(try JSONValue.yaml(yaml)))
    }

    @Test("every shipped policy validates against the policy schema", arguments: Fixtures.files(in: "policies"))
    func shippedPolicy(_ file: String) throws {
        #expect(try Self.errors(Self.policySchema(), Fixtures.text(file)) == [])
    }

    @Test("every shipped scenario file validates against the scenario schema", arguments: Fixtures.files(in: "examples"))
    func shippedScenarios(_ file: String) throws {
        #expect(try Self.errors(Self.scenarioSchema(), Fixtures.text(file)) == [])
    }

    @Test("the documents' examples validate: the policy language's, the scenario files', the README's tour")
    func documentedExamples() throws {
        let yaml = DocsTests.blocks("yaml", in: "docs/policy-language.md")
        #expect(try Self.errors(Self.policySchema(), try #require(yaml.first)) == [])
        let scenarios = DocsTests.blocks("yaml", in: "docs/scenario-files.md")
        #expect(try Self.errors(Self.scenarioSchema(), try #require(scenarios.first { $0.contains("scenarios:") })) == [])
        // The rules example is a fragment of a policy: it validates with a name and version.
        let rules = try #require(yaml.first { $0.contains("rules:") })
        #expect(try Self.errors(Self.policySchema(), "version: 1\nname: p\n" + rules) == [])
        #expect(throws: Never.self) { try PolicyFile.compile(text: "version: 1\nname: p\n" + rules, file: "docs/policy-language.md").get() }
        let tour = DocsTests.blocks("yaml", in: "README.md")
        #expect(try Self.errors(Self.policySchema(), try #require(tour.first { $0.contains("version: 1") })) == [])
        #expect(try Self.errors(Self.scenarioSchema(), try #require(tour.first { $0.contains("scenarios:") })) == [])
    }

    static let policyBase = "version: 1\nname: p\n"

    /// Policies the schema must refuse, each with a word its complaint names; the loader
    /// refuses them too.
    static let badPolicies: [(String, String)] = [
        ("sesion:\n  max: 90d\n", "unknown key `sesion`"),
        ("session:\n  max: 90d\n  maximum: 9d\n", "unknown key `maximum`"),
        ("session:\n  max: 7 days\n", "session.max"),
        ("session:\n  max: 7\n", "session.max"),
        ("offline:\n  window: -1d\n", "offline.window"),
        ("device:\n  clock_tolerance: 1.5h\n", "device.clock_tolerance"),
        ("auth_modes:\n  offline: [none, password]\n", "auth_modes.offline[1]"),
        ("auth_modes:\n  offline: [pin]\n", "auth_modes.offline[0]"),
        ("session:\n  on_expired: allow\n", "session.on_expired"),
        ("signals:\n  logout: read_only\n", "signals.logout"),
        ("signals:\n  tokens_revoked: { then: read_only }\n", "signals.tokens_revoked"),
        ("signals:\n  license_revoked: { notice_delay: 5s }\n", "signals.license_revoked"),
        ("signals:\n  license_revoked: { then: wipe, delay: 5s }\n", "signals.license_revoked"),
        ("retry:\n  biometric: { max: 0, then: idp_login }\n", "retry.biometric.max"),
        ("retry:\n  biometric: { max: three }\n", "retry.biometric.max"),
        ("offline:\n  credential: password\n", "offline.credential"),
        ("device:\n  single_user: yes\n", "device.single_user"),
    ]

    @Test("bad policies are refused by the schema and by the loader", arguments: badPolicies.indices)
    func badPolicy(_ index: Int) throws {
        let (body, mention) = Self.badPolicies[index]
        let errors = try Self.errors(Self.policySchema(), Self.policyBase + body)
        #expect(errors.contains { $0.contains(mention) }, "\(body) -> \(errors)")
        #expect(throws: DiagnosticError.self, "\(body)") { try PolicyFile.compile(text: Self.policyBase + body, file: "bad.yaml").get() }
    }

    @Test("a policy without version or name is refused")
    func requiredPolicyKeys() throws {
        let errors = try Self.errors(Self.policySchema(), "description: no name\n")
        #expect(errors.contains { $0.contains("missing key `version`") })
        #expect(errors.contains { $0.contains("missing key `name`") })
    }

    @Test("the forms the loader accepts are accepted")
    func goodPolicyForms() throws {
        let body = """
            description: "quoted"
            session: { max: 1d12h, idle: 30d, on_expired: wipe }
            offline: { window: 1d, credential: signed_jwt, key_protection: hardware, on_expired: idp_login }
            auth_modes: { offline: [] }
            retry: { idp_login: { max: 1, then: wipe } }
            signals:
              license_revoked: { then: read_only, notice_delay: 5s }
              logout: { then: wipe }
              tokens_revoked: idp_login
            device: { single_user: false, bind_session: True, clock_tolerance: 2w }

            """
        #expect(try Self.errors(Self.policySchema(), Self.policyBase + body) == [])
        #expect(throws: Never.self) { try PolicyFile.compile(text: Self.policyBase + body, file: "good.yaml").get() }
    }

    static let scenarioBase = """
        policy: spendiq
        scenarios:
          - name: s
            start: 2026-03-01T09:00:00Z
            context: { network: offline, user: ana, device: { id: pixel-7 } }
            steps:
              - event: idp_login_succeeded
                auth_mode: none

        """

    /// Scenario files the schema must refuse (with the word the complaint names); the loader
    /// refuses them too.
    static let badScenarios: [(String, String)] = [
        ("- event: launch\n  netwerk: online", "unknown key `netwerk`"),
        ("- at: 3d\n  event: resume\n  network: online", "steps[1].at"),
        ("- at: +3 days\n  event: resume\n  network: online", "steps[1].at"),
        ("- event: teleport", "steps[1].event"),
        ("- event: launch\n  network: wifi", "steps[1].network"),
        ("- event: launch\n  device: { keystore: tpm }", "steps[1].device.keystore"),
        ("- event: launch\n  unsynced_items: -1", "steps[1].unsynced_items"),
        ("- event: launch\n  expect: { decision: maybe }", "expect.decision"),
        ("- event: launch\n  expect: { notices: [network] }", "expect.notices[0]"),
        ("- event: launch\n  expect: { notice_delay: soon }", "expect.notice_delay"),
        ("- event: launch\n  expect: { state: gone }", "expect.state"),
        ("- event: launch\n  expect: { bogus: 1 }", "unknown key `bogus`"),
        ("- expect: { decision: allow }", "missing key `event`"),
    ]

    @Test("bad scenario files are refused by the schema and by the loader", arguments: badScenarios.indices)
    func badScenario(_ index: Int) throws {
        let (step, mention) = Self.badScenarios[index]
        let yaml = Self.scenarioBase + step.split(separator: "\n").map { "      " + $0 }.joined(separator: "\n") + "\n"
        let errors = try Self.errors(Self.scenarioSchema(), yaml)
        #expect(errors.contains { $0.contains(mention) }, "\(yaml) -> \(errors)")
        let node = try #require(try YAMLSyntax.parse(yaml, file: "bad.yaml").get())
        #expect(ScenarioLoader.load(node, file: "bad.yaml", defaultPolicy: nil).1.hasErrors, "\(yaml)")
    }

    @Test("scenario-level mistakes are refused")
    func badScenarioShapes() throws {
        let s = try Self.scenarioSchema()
        #expect(try Self.errors(s, "policy: spendiq\n").contains { $0.contains("missing key `scenarios`") })
        #expect(try Self.errors(s, "scenarios: []\n").contains { $0.contains("at least 1") })
        let noStart = "scenarios:\n  - name: s\n    steps: [{ event: launch, network: online }]\n"
        #expect(try Self.errors(s, noStart).contains { $0.contains("missing key `start`") })
        // Any id is accepted in `covers:` (the catalogue's, or the user's own); an empty one is not.
        let badCover = Self.scenarioBase.replacingOccurrences(of: "start:", with: "covers: [\"\"]\n    start:")
        #expect(try Self.errors(s, badCover).contains { $0.contains("covers[0]") })
        let ownCover = Self.scenarioBase.replacingOccurrences(of: "start:", with: "covers: [K3, REQ-12, K9]\n    start:")
        #expect(try Self.errors(s, ownCover) == [])
        let relativeStart = Self.scenarioBase.replacingOccurrences(of: "2026-03-01T09:00:00Z", with: "+1d")
        #expect(try Self.errors(s, relativeStart).contains { $0.contains("start") })
        let badState = Self.scenarioBase.replacingOccurrences(of: "    steps:", with: "    state: { user: ana }\n    steps:")
        #expect(try Self.errors(s, badState).contains { $0.contains("missing key `state`") })
    }

    @Test("a step that expects an error may carry an invalid event; others may not")
    func expectedErrors() throws {
        let s = try Self.scenarioSchema()
        let step = "      - event: teleport\n        network: wifi\n        device: { integrity: maybe }\n"
        #expect(try Self.errors(s, Self.scenarioBase + step + "        expect: { error: invalid-value }\n") == [])
        #expect(try Self.errors(s, Self.scenarioBase + step + "        expect: { decision: none }\n").count == 3)
        // Keys are checked either way: the loader reports unknown keys whatever the step expects.
        let unknown = "      - event: launch\n        netwerk: online\n        expect: { error: invalid-value }\n"
        #expect(try Self.errors(s, Self.scenarioBase + unknown).contains { $0.contains("unknown key `netwerk`") })
    }

    @Test("the forms the scenario loader accepts are accepted")
    func goodScenarioForms() throws {
        let steps = """
                  - at: 2026-03-02T10:00:00.250+01:00
                    event: refresh_failed
                    cause: invalid_token
                    unsynced_items: 3
                    note: free text
                    expect: { decision: null, scope: none, auth_mode: null, notices: [], notice_delay: 5s, user: ana }
                  - at: -1h
                    event: logout
                    device: { id: "42", keystore: none, integrity: ok }
                    expect: { decision: wipe, reason: logged_out, message: "text: with a colon", state: signed_out }

            """
        let yaml = Self.scenarioBase.replacingOccurrences(
            of: "    steps:",
            with: "    covers: [K1, X4]\n    state: { state: active, last_online: -2d, failures: { biometric: 0 } }\n    steps:")
        #expect(try Self.errors(Self.scenarioSchema(), yaml + steps) == [])
        let node = try #require(try YAMLSyntax.parse(yaml + steps, file: "good.yaml").get())
        let diagnostics = ScenarioLoader.load(node, file: "good.yaml", defaultPolicy: nil).1
        #expect(diagnostics.isEmpty, "\(diagnostics)")
    }
}
