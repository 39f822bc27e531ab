import Foundation
import SessionPolicyTestSupport
import Testing

/// Bad bytes and bad shapes, through the built `policyctl` as a policy author meets them: each
/// case exits 2 with one located diagnostic of its own code, at its own line and column, with
/// a hint, in the product's words.
@Suite("policyctl: bad input at the exact byte")
struct BadInputTests {
    /// One bad file: its bytes, the command kind that reads it, and the first diagnostic expected.
    struct Case: Sendable, CustomTestStringConvertible {
        var name: String
        var bytes: [UInt8]
        /// `policy` (read by `compile`) or `scenario` (read by `check policies FILE`).
        var kind = "policy"
        var code: String
        var line: Int
        var column: Int
        /// Words the message or hint must contain.
        var says: [String] = []
        var testDescription: String { name }
    }

    static func utf8(_ s: String) -> [UInt8] { Array(s.utf8) }
    static func utf16LE(_ s: String) -> [UInt8] { s.utf16.flatMap { [UInt8($0 & 0xFF), UInt8($0 >> 8)] } }
    static func utf16BE(_ s: String) -> [UInt8] { s.utf16.flatMap { [UInt8($0 >> 8), UInt8($0 & 0xFF)] } }
    static func utf32LE(_ s: String) -> [UInt8] {
        s.unicodeScalars.flatMap { v in (0..<4).map { UInt8((v.value >> (8 * UInt32($0))) & 0xFF) } }
    }
    static func utf32BE(_ s: String) -> [UInt8] { utf32LE(s).chunked4Reversed() }
    static let policy = "version: 1\nname: p\n"

    static let cases: [Case] = [
        Case(
            name: "NUL byte", bytes: utf8("version: 1\nname: a\u{0}b\n"), code: "control-character", line: 2, column: 8,
            says: ["U+0000 (NUL)"]),
        Case(
            name: "escape character", bytes: utf8("version: 1\n\n  \u{1B}x: 1\n"), code: "control-character", line: 3, column: 3,
            says: ["U+001B (ESC)"]),
        Case(
            name: "DEL", bytes: utf8("version: 1\nname: a\u{7F}\n"), code: "control-character", line: 2, column: 8, says: ["U+007F (DEL)"]),
        Case(
            name: "C1 control", bytes: utf8("version: 1\r\nname: \u{85}\u{9B}\r\n"), code: "control-character", line: 2, column: 8,
            says: ["U+009B"]),
        Case(
            name: "Latin-1 byte", bytes: utf8("version: 1\nname: caf") + [0xE9] + utf8("\n"), code: "invalid-utf8", line: 2, column: 10,
            says: ["0xE9", "offset 20", "iconv"]),
        Case(
            name: "truncated sequence", bytes: utf8("version: 1\nname: é") + [0xC3], code: "invalid-utf8", line: 2, column: 8,
            says: ["0xC3"]),
        Case(
            name: "UTF-16LE with BOM", bytes: [0xFF, 0xFE] + utf16LE(policy), code: "unsupported-encoding", line: 1, column: 1,
            says: ["UTF-16", "iconv -f UTF-16 "]),
        Case(
            name: "UTF-16BE with BOM", bytes: [0xFE, 0xFF] + utf16BE(policy), code: "unsupported-encoding", line: 1, column: 1,
            says: ["UTF-16 (big-endian"]),
        Case(
            name: "UTF-16LE without BOM", bytes: utf16LE(policy), code: "unsupported-encoding", line: 1, column: 1,
            says: ["iconv -f UTF-16LE"]),
        Case(
            name: "UTF-16BE without BOM", bytes: utf16BE(policy), code: "unsupported-encoding", line: 1, column: 1,
            says: ["iconv -f UTF-16BE"]),
        Case(
            name: "UTF-32LE with BOM", bytes: [0xFF, 0xFE, 0, 0] + utf32LE(policy), code: "unsupported-encoding", line: 1, column: 1,
            says: ["UTF-32"]),
        Case(
            name: "UTF-32BE without BOM", bytes: utf32BE(policy), code: "unsupported-encoding", line: 1, column: 1,
            says: ["iconv -f UTF-32BE"]),
        Case(name: "empty file", bytes: [], code: "empty-document", line: 1, column: 1, says: ["`version: 1`", "`name: NAME`"]),
        Case(
            name: "only comments", bytes: utf8("# a policy\n# to come\n"), code: "empty-document", line: 1, column: 1,
            says: ["`version: 1`"]),
        Case(name: "only document markers", bytes: utf8("---\n...\n"), code: "empty-document", line: 1, column: 1, says: ["`version: 1`"]),
        Case(
            name: "a list at the top", bytes: utf8("- version: 1\n"), code: "wrong-type", line: 1, column: 1,
            says: ["found a list", "`version: 1`"]),
        Case(
            name: "a scalar at the top", bytes: utf8("hello\n"), code: "wrong-type", line: 1, column: 1,
            says: ["found a scalar", "`version: 1`"]),
        Case(
            name: "two documents", bytes: utf8("version: 1\nname: a\n---\nversion: 1\n"), code: "multiple-documents", line: 3, column: 1,
            says: ["second YAML document"]),
        Case(
            name: "deep block nesting",
            bytes: utf8(
                (0..<70).map { String(repeating: "  ", count: $0) + "k\($0):\n" }.joined() + String(repeating: "  ", count: 70) + "v\n"),
            code: "nesting-too-deep", line: 64, column: 127, says: ["64 levels"]),
        Case(
            name: "deep flow nesting",
            bytes: utf8("x: " + String(repeating: "[", count: 2000) + String(repeating: "]", count: 2000) + "\n"), code: "nesting-too-deep",
            line: 1, column: 67, says: ["64 levels"]),
        Case(
            name: "version as a string", bytes: utf8("version: \"1\"\nname: p\n"), code: "wrong-type", line: 1, column: 10,
            says: ["found a string"]),
        Case(name: "scenario file: empty", bytes: [], kind: "scenario", code: "empty-document", line: 1, column: 1, says: ["`scenarios:`"]),
        Case(
            name: "scenario file: a list", bytes: utf8("- name: a\n"), kind: "scenario", code: "wrong-type", line: 1, column: 1,
            says: ["`scenarios:`"]),
        Case(
            name: "scenario file: NUL", bytes: utf8("policy: spendiq\n\u{0}"), kind: "scenario", code: "control-character", line: 2,
            column: 1, says: ["U+0000"]),
    ]

    /// Words that betray the implementation: a library or function name, a Swift type, a build path.
    static let leaks = [
        "yaml_", "Yams", "libyaml", "YamlError", "Optional(", "Swift.", "SessionPolicy.", "DecodingError", "NSError", ".swift",
        "/.build/", "Fatal error", "Stack dump", "(null)",
    ]

    static func expectNoLeak(_ text: String, _ what: String, sourceLocation: Testing.SourceLocation = #_sourceLocation) {
        for word in leaks where text.contains(word) {
            Issue.record("\(what) leaks `\(word)`:\n\(text.prefix(800))", sourceLocation: sourceLocation)
        }
    }

    @Test("each bad byte and shape is reported at its place, with its code and a hint", arguments: cases)
    func badInput(_ c: Case) throws {
        let dir = try Fixtures.temporaryDirectory("bad-input")
        defer { try? FileManager.default.removeItem(at: dir) }
        let file = dir.appendingPathComponent("bad.yaml")
        try Data(c.bytes).write(to: file)
        let r = try CLI.run(c.kind == "policy" ? ["compile", file.path] : ["check", "policies", file.path])
        #expect(r.status == 2, "\(c.name): exit \(r.status)\n\(r.stderr)")
        let first = r.stderr.split(separator: "\n").first.map(String.init) ?? ""
        #expect(first.hasPrefix("\(file.path):\(c.line):\(c.column): error[\(c.code)]: "), "\(c.name): \(first)")
        #expect(r.stderr.contains("= help: "), "\(c.name): no hint\n\(r.stderr)")
        for word in c.says { #expect(r.stderr.contains(word), "\(c.name): does not say `\(word)`\n\(r.stderr)") }
        Self.expectNoLeak(r.stderr, c.name)
    }

    @Test("the bad-policy corpus leaks no implementation detail", arguments: Fixtures.files(in: "Tests/Fixtures/bad-policies"))
    func corpusWords(_ file: String) throws {
        let r = try CLI.run(["compile", file])
        #expect(r.status == 2)
        Self.expectNoLeak(r.stderr, file)
    }

    /// Writes `files` (name -> text) into a fresh folder.
    static func folder(_ files: [String: String]) throws -> URL {
        let dir = try Fixtures.temporaryDirectory("scenario-load")
        for (name, text) in files {
            let url = dir.appendingPathComponent(name)
            try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
            try text.write(to: url, atomically: true, encoding: .utf8)
        }
        return dir
    }

    static let steps = """
            start: 2026-01-10T08:00:00Z
            context: { network: online, user: u, device: { id: p } }
            steps:
              - event: launch
                expect: { decision: idp_login }
        """

    @Test("a scenario naming a policy file that does not exist: one error at its policy: line, with the path as resolved")
    func missingPolicyFile() throws {
        let dir = try Self.folder([
            "ex/s.yaml": "policy: ../nowhere/p.yaml\nscenarios:\n  - name: a\n\(Self.steps)\n  - name: b\n\(Self.steps)\n"
        ])
        defer { try? FileManager.default.removeItem(at: dir) }
        let r = try CLI.run(["check", "policies", dir.appendingPathComponent("ex/s.yaml").path])
        #expect(r.status == 2)
        let resolved = dir.appendingPathComponent("ex").path + "/../nowhere/p.yaml"
        #expect(
            r.stderr.contains("ex/s.yaml:1:9: error[file-not-found]: policy file `../nowhere/p.yaml` not found: looked for `\(resolved)`"),
            "\(r.stderr)")
        #expect(r.stderr.contains("relative to the scenario file's folder"))
        #expect(!r.stderr.contains("unknown-policy"), "the cause is reported once")
        #expect(r.stderr.contains("1 error"), "\(r.stderr)")
    }

    @Test("attributes a scenario's policy does not declare, or with values it refuses, are located load errors")
    func attributes() throws {
        let dir = try Self.folder([
            "s.yaml": """
            policy: i360-marketsharp
            scenarios:
              - name: a
                start: 2026-01-10T08:00:00Z
                context: { network: online, user: u, device: { id: p }, attributes: { colour: red } }
                steps:
                  - event: idp_login_succeeded
                    auth_mode: none
                    attributes: { license: 3, company_license_format: legacy }
                    expect: { decision: wipe }
                  - event: launch
                    expect: { decision: allow }
            """
        ])
        defer { try? FileManager.default.removeItem(at: dir) }
        let file = dir.appendingPathComponent("s.yaml").path
        let r = try CLI.run(["check", "policies", file])
        #expect(r.status == 2, "a load error, not a scenario failure: \(r.stdout)\(r.stderr)")
        #expect(
            r.stderr.contains("\(file):5:83: error[unknown-attribute]: attribute `colour` is not declared by policy `i360-marketsharp`"),
            "\(r.stderr)")
        #expect(r.stderr.contains("\(file):9:32: error[type-mismatch]: attribute `license` cannot be `3`"), "\(r.stderr)")
        #expect(r.stderr.contains("2 errors"), "the context's attribute is reported once, not per step: \(r.stderr)")
        #expect(!r.stderr.contains("#-1") && !r.stdout.contains("#-1"))
    }

    @Test("an expected reason the policy never gives is a load error with the closest name")
    func unknownReason() throws {
        let dir = try Self.folder([
            "s.yaml": """
            policy: spendiq
            scenarios:
              - name: a
                start: 2026-01-10T08:00:00Z
                context: { network: offline, user: u, device: { id: p } }
                steps:
                  - event: launch
                    expect: { reason: offline_window_expired }
                  - event: launch
                    expect: { reason: session_idle_expired }
            """
        ])
        defer { try? FileManager.default.removeItem(at: dir) }
        let file = dir.appendingPathComponent("s.yaml").path
        let r = try CLI.run(["check", "policies", file])
        #expect(r.status == 2)
        #expect(r.stderr.contains("\(file):8:27: error[unknown-reason]: policy `spendiq` never gives reason `offline_window_expired`"))
        #expect(r.stderr.contains("`offline_window_expired` is now called `offline_window_exceeded`"))
        #expect(r.stderr.contains("did you mean `session_idle_exceeded`?"), "\(r.stderr)")
    }
}

extension Array where Element == UInt8 {
    /// Each group of four bytes reversed: UTF-32LE to UTF-32BE.
    fileprivate func chunked4Reversed() -> [UInt8] {
        stride(from: 0, to: count, by: 4).flatMap { self[$0..<Swift.min($0 + 4, count)].reversed() }
    }
}
