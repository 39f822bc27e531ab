import Crypto
import Foundation
import SessionPolicy
import SessionPolicyDelivery
import SessionPolicyTestSupport
import SessionPolicyYAML
import Testing

/// The signed-machine vectors every runtime runs (spec/conformance/envelopes.jsonl and keys.jsonl,
/// docs/envelope.md): written by this suite with the test keys when `RECORD_ENVELOPES=1` (ECDSA
/// signatures are randomized, so a recording changes bytes, and is made only when asked), and
/// run here through `MachineUpdater` on every test run: each line's result must be its `want`.
@Suite("Envelope conformance")
struct EnvelopeConformanceTests {
    static let record = ProcessInfo.processInfo.environment["RECORD_ENVELOPES"] != nil
    static func path(_ relative: String) -> String { Fixtures.path("spec/conformance/\(relative)") }
    static func text(_ relative: String) throws -> String { try String(contentsOfFile: path(relative), encoding: .utf8) }

    static let t0: Int64 = 1_772_355_600_000  // 2026-03-01T09:00:00Z
    static let day: Int64 = 86_400_000
    static let tolerance: Int64 = 600_000

    // MARK: - Writing the vectors

    struct Vector {
        var id: String
        var keys: [String] = ["a"]
        var policy = "i360-salesforce"
        var now: Int64 = t0 + 3_600_000
        var tolerance: Int64 = EnvelopeConformanceTests.tolerance
        var after: String? = nil
        var restore = false
        var envelope: String
        var want: String

        var line: String {
            let json = { (s: String) in CanonicalJSON.string(s).text }
            return
                #"{"id":\#(json(id)),"keys":[\#(keys.map(json).joined(separator: ","))],"policy":\#(json(policy)),"now":\#(now),"tolerance":\#(tolerance),"after":\#(after.map(json) ?? "null"),"restore":\#(restore),"envelope":\#(json(envelope)),"want":\#(want)}"#
        }
    }

    static func b64(_ bytes: some Sequence<UInt8>) -> String {
        Data(bytes).base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }

    static func privateKey(_ name: String) throws -> P256.Signing.PrivateKey {
        try P256.Signing.PrivateKey(pemRepresentation: text("keys/\(name).key.pem"))
    }

    static func keyID(_ name: String) throws -> String { try TrustedKey(pem: text("keys/\(name).pub.pem")).id }

    /// A compact JWS of `header` and `payload` (any text), signed with key `signer`.
    static func jws(_ header: String, _ payload: String, signer: String) throws -> String {
        let input = b64(Array(header.utf8)) + "." + b64(Array(payload.utf8))
        let signature = try privateKey(signer).signature(for: Data(input.utf8)).rawRepresentation
        return input + "." + b64(signature)
    }

    static func header(kid: String, alg: String = "ES256", typ: String = "sessionpolicy-machine+jws") -> String {
        CanonicalJSON.object(["alg": .string(alg), "kid": .string(kid), "typ": .string(typ)]).text
    }

    static func payload(
        _ machine: PolicyMachine, serial: Int64 = 100, issued: Int64 = t0, expires: Int64 = t0 + 30 * day, small: Bool = false,
        change: (inout [String: CanonicalJSON]) -> Void = { _ in }
    ) -> String {
        var members: [String: CanonicalJSON] = [
            "format": .string("sessionpolicy-envelope/1"), "policy": .string(machine.name), "serial": .int(serial),
            "issued_at": .int(issued), "expires_at": .int(expires), "digest": .string(machine.digest),
            "machine": .string(small ? Self.placeholder : machine.document),
        ]
        change(&members)
        return CanonicalJSON.object(members).text
    }

    /// The `machine` of the vectors whose envelope is refused before the machine is read: a
    /// machine document is about 150 KB, and the checks before it do not read it.
    static let placeholder = "(not read: an earlier check refuses this envelope)"

    static func installed(_ serial: Int64, _ machine: PolicyMachine) -> String {
        #"{"result":"installed","serial":\#(serial),"digest":"\#(machine.digest)"}"#
    }
    static func refused(_ code: String) -> String { #"{"result":"refused","code":"\#(code)"}"# }
    static let unchanged = #"{"result":"unchanged"}"#

    /// The curve order of P-256, big-endian.
    static let order: [UInt8] = Array(
        Data(base64Encoded: "/////wAAAAD//////////7zm+q2nF56E87nKwvxjJVE=")!)

    /// `a - b` over 32-byte big-endian numbers, `a >= b`.
    static func subtract(_ a: [UInt8], _ b: [UInt8]) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: 32)
        var borrow = 0
        for i in (0..<32).reversed() {
            var d = Int(a[i]) - Int(b[i]) - borrow
            borrow = d < 0 ? 1 : 0
            if d < 0 { d += 256 }
            out[i] = UInt8(d)
        }
        return out
    }

    static func vectors() throws -> [Vector] {
        let m1 = try PolicyMachine(document: Data(text("machines/i360-salesforce.json").utf8))
        let yaml = try String(contentsOfFile: Fixtures.path("policies/i360-salesforce.yaml"), encoding: .utf8)
        let changed = yaml.replacingOccurrences(of: "\n  Salesforce session: ", with: "\n  (Changed) Salesforce session: ")
        #expect(changed != yaml)
        let compiled = try PolicyFile.compile(text: changed, file: "i360-salesforce.yaml").get()
        let m2 = try PolicyMachine(document: Data(compiled.machineDocument.utf8))
        #expect(m1.digest != m2.digest)
        let other = try PolicyMachine(document: Data(text("machines/spendiq.json").utf8))
        let a = try keyID("a"), c = try keyID("c")
        let good = try jws(header(kid: a), payload(m1), signer: "a")
        // The same, with the placeholder for the machine: for the refusals before the machine is read.
        let parts = try jws(header(kid: a), payload(m1, small: true), signer: "a").split(separator: ".").map(String.init)
        let (h, p, s) = (parts[0], parts[1], parts[2])
        let standard = s.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        let signature = Array(try #require(Data(base64Encoded: standard + String(repeating: "=", count: (4 - standard.count % 4) % 4))))
        #expect(signature.count == 64)
        let full = good.split(separator: ".").map(String.init)
        let fullSignature = Array(
            try #require(
                Data(base64Encoded: full[2].replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/") + "==")))
        func flip(_ segment: String, at index: Int) -> String {
            var chars = Array(segment)
            chars[index] = chars[index] == "A" ? "B" : "A"
            return String(chars)
        }
        var v: [Vector] = []
        // Accepted.
        v.append(Vector(id: "signed with the pinned key", envelope: good, want: installed(100, m1)))
        v.append(
            Vector(
                id: "signed with the second of two pinned keys (rotation)", keys: ["a", "b"],
                envelope: try jws(header(kid: keyID("b")), payload(m1), signer: "b"), want: installed(100, m1)))
        v.append(Vector(id: "a line feed after the envelope", envelope: good + "\n", want: installed(100, m1)))
        v.append(Vector(id: "white space around the envelope", envelope: " \r\n\t" + good + " \r\n", want: installed(100, m1)))
        v.append(
            Vector(
                id: "the same signature with s replaced by n - s",
                envelope: full[0] + "." + full[1] + "." + b64(fullSignature[0..<32] + subtract(order, Array(fullSignature[32..<64]))),
                want: installed(100, m1)))
        v.append(
            Vector(
                id: "a header not canonical: members in another order, spaces",
                envelope: try jws(
                    #"{ "typ" : "sessionpolicy-machine+jws", "kid" : "\#(a)", "alg" : "ES256" }"#, payload(m1), signer: "a"),
                want: installed(100, m1)))
        v.append(
            Vector(
                id: "issued exactly the tolerance after now", now: t0 - tolerance, envelope: good, want: installed(100, m1)))
        v.append(
            Vector(
                id: "expired exactly the tolerance before now", now: t0 + 30 * day + tolerance, envelope: good,
                want: installed(100, m1)))
        v.append(
            Vector(
                id: "restored: the times are not checked", now: t0 + 365 * day, restore: true, envelope: good,
                want: installed(100, m1)))
        // Refused: the text.
        v.append(Vector(id: "empty", envelope: "", want: refused("envelope-malformed")))
        v.append(Vector(id: "two segments: the signature and its dot stripped", envelope: h + "." + p, want: refused("envelope-malformed")))
        v.append(Vector(id: "four segments", envelope: good + ".AAAA", want: refused("envelope-malformed")))
        v.append(
            Vector(
                id: "truncated in the middle of the payload", envelope: String(good.prefix(h.count + 1 + p.count / 2)),
                want: refused("envelope-malformed")))
        v.append(Vector(id: "an empty header segment", envelope: "." + p + "." + s, want: refused("envelope-malformed")))
        v.append(Vector(id: "padding in a segment", envelope: h + "." + p + "." + s + "==", want: refused("envelope-malformed")))
        v.append(
            Vector(
                id: "standard base64 instead of base64url",
                envelope: h + "." + p + "." + s.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
                    + (s.contains("-") || s.contains("_") ? "" : "+"),
                want: refused("envelope-malformed")))
        v.append(
            Vector(
                id: "a segment of 4n + 1 characters", envelope: h + "." + p + "." + s.dropLast(), want: refused("envelope-malformed")))
        // The signature's 64 bytes are 86 characters: the last one carries 2 unused bits.
        let last = s.last!
        let index = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_").firstIndex(of: last)!
        let trailing = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")[index | 1]
        v.append(
            Vector(
                id: "the unused bits of the last character not zero", envelope: h + "." + p + "." + s.dropLast() + String(trailing),
                want: refused("envelope-malformed")))
        v.append(Vector(id: "a space inside", envelope: h + ". " + p + "." + s, want: refused("envelope-malformed")))
        // Refused: the header.
        func withHeader(_ text: String, signer: String = "a") throws -> String { try jws(text, payload(m1, small: true), signer: signer) }
        v.append(Vector(id: "a header that is not JSON", envelope: try withHeader("{alg:ES256}"), want: refused("envelope-malformed")))
        v.append(Vector(id: "a header that is a list", envelope: try withHeader(#"["ES256"]"#), want: refused("envelope-malformed")))
        v.append(
            Vector(
                id: "a header with `kid` twice",
                envelope: try withHeader(#"{"alg":"ES256","kid":"\#(c)","kid":"\#(a)","typ":"sessionpolicy-machine+jws"}"#),
                want: refused("envelope-malformed")))
        v.append(
            Vector(
                id: "a header with a `jku` member (no key is fetched)",
                envelope: try withHeader(
                    #"{"alg":"ES256","jku":"https://attacker.example/keys","kid":"\#(a)","typ":"sessionpolicy-machine+jws"}"#),
                want: refused("envelope-malformed")))
        v.append(
            Vector(
                id: "a header without `kid`", envelope: try withHeader(#"{"alg":"ES256","typ":"sessionpolicy-machine+jws"}"#),
                want: refused("envelope-malformed")))
        v.append(
            Vector(
                id: "a `kid` that is a number", envelope: try withHeader(#"{"alg":"ES256","kid":1,"typ":"sessionpolicy-machine+jws"}"#),
                want: refused("envelope-malformed")))
        v.append(Vector(id: "`typ` JWT", envelope: try withHeader(header(kid: a, typ: "JWT")), want: refused("unsupported-envelope")))
        v.append(
            Vector(
                id: "`alg` none with no signature", envelope: b64(Array(header(kid: a, alg: "none").utf8)) + "." + p + ".",
                want: refused("unsupported-algorithm")))
        let hs = b64(Array(header(kid: a, alg: "HS256").utf8)) + "." + p
        let mac = HMAC<Crypto.SHA256>.authenticationCode(
            for: Data(hs.utf8), using: SymmetricKey(data: Data(try text("keys/a.pub.pem").utf8)))
        v.append(
            Vector(
                id: "`alg` HS256 keyed with the public key's PEM", envelope: hs + "." + b64(Array(mac)),
                want: refused("unsupported-algorithm")))
        v.append(
            Vector(id: "`alg` ES384", envelope: try withHeader(header(kid: a, alg: "ES384")), want: refused("unsupported-algorithm")))
        v.append(
            Vector(
                id: "`alg` es256 (case differs)", envelope: try withHeader(header(kid: a, alg: "es256")),
                want: refused("unsupported-algorithm")))
        // Refused: the signature.
        v.append(Vector(id: "the signature stripped", envelope: h + "." + p + ".", want: refused("signature-missing")))
        v.append(
            Vector(
                id: "signed with a key that is not pinned", envelope: try jws(header(kid: c), payload(m1, small: true), signer: "c"),
                want: refused("unpinned-key")))
        v.append(
            Vector(
                id: "the pinned key's id, signed with another key",
                envelope: try jws(header(kid: a), payload(m1, small: true), signer: "c"),
                want: refused("bad-signature")))
        v.append(
            Vector(
                id: "a payload character changed", envelope: h + "." + flip(p, at: p.count / 2) + "." + s, want: refused("bad-signature")))
        v.append(Vector(id: "a signature character changed", envelope: h + "." + p + "." + flip(s, at: 10), want: refused("bad-signature")))
        // With the machine whole: a runtime that skipped the signature would install this one.
        v.append(
            Vector(
                id: "a signature character changed, the machine whole", envelope: full[0] + "." + full[1] + "." + flip(full[2], at: 10),
                want: refused("bad-signature")))
        v.append(
            Vector(id: "a signature of 63 bytes", envelope: h + "." + p + "." + b64(signature.dropLast()), want: refused("bad-signature")))
        v.append(
            Vector(
                id: "a signature with r = 0", envelope: h + "." + p + "." + b64([UInt8](repeating: 0, count: 32) + signature[32..<64]),
                want: refused("bad-signature")))
        v.append(
            Vector(
                id: "a signature with s = n", envelope: h + "." + p + "." + b64(signature[0..<32] + order), want: refused("bad-signature")))
        v.append(
            Vector(
                id: "the signature of another envelope",
                envelope: h + "." + p + "."
                    + String(try jws(header(kid: a), payload(m2, small: true), signer: "a").split(separator: ".")[2]),
                want: refused("bad-signature")))
        // Refused: the payload (validly signed).
        func withPayload(_ text: String) throws -> String { try jws(header(kid: a), text, signer: "a") }
        v.append(Vector(id: "a payload that is not JSON", envelope: try withPayload("machine"), want: refused("envelope-malformed")))
        v.append(
            Vector(
                id: "a payload without `format`", envelope: try withPayload(payload(m1, small: true) { $0["format"] = nil }),
                want: refused("envelope-malformed")))
        v.append(
            Vector(
                id: "format sessionpolicy-envelope/2",
                envelope: try withPayload(payload(m1, small: true) { $0["format"] = .string("sessionpolicy-envelope/2") }),
                want: refused("unsupported-envelope")))
        v.append(
            Vector(
                id: "a payload with an unknown member", envelope: try withPayload(payload(m1, small: true) { $0["not_before"] = .int(0) }),
                want: refused("envelope-malformed")))
        v.append(
            Vector(
                id: "a payload without `serial`", envelope: try withPayload(payload(m1, small: true) { $0["serial"] = nil }),
                want: refused("envelope-malformed")))
        v.append(
            Vector(id: "serial 0", envelope: try withPayload(payload(m1, serial: 0, small: true)), want: refused("envelope-malformed")))
        v.append(
            Vector(
                id: "serial 2^53", envelope: try withPayload(payload(m1, serial: 9_007_199_254_740_992, small: true)),
                want: refused("envelope-malformed")))
        v.append(
            Vector(
                id: "serial 2^53 - 1", envelope: try withPayload(payload(m1, serial: 9_007_199_254_740_991)),
                want: installed(9_007_199_254_740_991, m1)))
        v.append(
            Vector(
                id: "serial as a string", envelope: try withPayload(payload(m1, small: true) { $0["serial"] = .string("100") }),
                want: refused("envelope-malformed")))
        v.append(
            Vector(
                id: "serial 100.0",
                envelope: try withPayload(payload(m1, small: true).replacingOccurrences(of: #""serial":100"#, with: #""serial":100.0"#)),
                want: refused("envelope-malformed")))
        v.append(
            Vector(
                id: "serial 1e2",
                envelope: try withPayload(payload(m1, small: true).replacingOccurrences(of: #""serial":100"#, with: #""serial":1e2"#)),
                want: refused("envelope-malformed")))
        v.append(
            Vector(
                id: "expires_at equal to issued_at", envelope: try withPayload(payload(m1, issued: t0, expires: t0, small: true)),
                want: refused("envelope-malformed")))
        v.append(
            Vector(
                id: "issued_at negative", envelope: try withPayload(payload(m1, issued: -1, expires: t0, small: true)),
                want: refused("envelope-malformed")))
        v.append(
            Vector(
                id: "a digest that is not sha256 hex",
                envelope: try withPayload(payload(m1, small: true) { $0["digest"] = .string("sha1:abc") }),
                want: refused("envelope-malformed")))
        v.append(
            Vector(
                id: "the machine as an object, not a string",
                envelope: try withPayload(
                    payload(m1, small: true) { $0["machine"] = .object(["format": .string("sessionpolicy-machine/1")]) }),
                want: refused("envelope-malformed")))
        v.append(
            Vector(
                id: "a payload key twice",
                envelope: try withPayload(
                    payload(m1, small: true).replacingOccurrences(of: #"{"digest""#, with: #"{"policy":"spendiq","digest""#)),
                want: refused("envelope-malformed")))
        v.append(
            Vector(
                id: "the machine of another policy", envelope: try withPayload(payload(other, small: true)), want: refused("wrong-policy")))
        v.append(
            Vector(
                id: "issued more than the tolerance after now", now: t0 - tolerance - 1, envelope: good, want: refused("not-yet-valid")))
        v.append(
            Vector(
                id: "expired more than the tolerance before now", now: t0 + 30 * day + tolerance + 1, envelope: good,
                want: refused("expired")))
        let document = m1.document
        let altered = document.replacingOccurrences(of: #""name":"i360-salesforce""#, with: #""name":"i360-salesforcf""#)
        #expect(altered != document)
        v.append(
            Vector(
                id: "a machine document changed after its digest was taken",
                envelope: try withPayload(payload(m1) { $0["machine"] = .string(altered) }), want: refused("machine-refused")))
        v.append(
            Vector(
                id: "a machine document that is not JSON", envelope: try withPayload(payload(m1) { $0["machine"] = .string("{") }),
                want: refused("machine-refused")))
        v.append(
            Vector(
                id: "the digest of another machine", envelope: try withPayload(payload(m1) { $0["digest"] = .string(m2.digest) }),
                want: refused("machine-mismatch")))
        v.append(
            Vector(
                id: "a machine of another policy under this policy's name",
                envelope: try withPayload(payload(other) { $0["policy"] = .string("i360-salesforce") }), want: refused("machine-mismatch")))
        // Against the machine held (after "signed with the pinned key": serial 100, m1).
        let held = "signed with the pinned key"
        v.append(
            Vector(
                id: "a larger serial, another machine", after: held, envelope: try withPayload(payload(m2, serial: 101)),
                want: installed(101, m2)))
        v.append(
            Vector(
                id: "a smaller serial, another machine (rollback)", after: held, envelope: try withPayload(payload(m2, serial: 99)),
                want: refused("rollback")))
        v.append(
            Vector(
                id: "the same serial, another machine", after: held, envelope: try withPayload(payload(m2, serial: 100)),
                want: refused("rollback")))
        v.append(
            Vector(
                id: "a smaller serial, the same machine", after: held, envelope: try withPayload(payload(m1, serial: 7)), want: unchanged))
        v.append(Vector(id: "the same envelope again", after: held, envelope: good, want: unchanged))
        v.append(
            Vector(
                id: "a larger serial, the same machine (the serial held moves up)", after: held,
                envelope: try withPayload(payload(m1, serial: 101)), want: installed(101, m1)))
        v.append(
            Vector(
                id: "another machine, expired", now: t0 + 60 * day,
                envelope: try withPayload(payload(m2, serial: 101, small: true)), want: refused("expired")))
        // Restored.
        v.append(
            Vector(
                id: "restored over a machine held: a smaller serial, another machine", after: held, restore: true,
                envelope: try withPayload(payload(m2, serial: 99)), want: refused("rollback")))
        v.append(
            Vector(
                id: "restored: a payload character changed", restore: true, envelope: h + "." + flip(p, at: 40) + "." + s,
                want: refused("bad-signature")))
        v.append(
            Vector(
                id: "restored: the machine of another policy", restore: true, envelope: try withPayload(payload(other, small: true)),
                want: refused("wrong-policy")))
        v.append(
            Vector(
                id: "restored: not yet valid is not checked", now: 0, restore: true, envelope: good, want: installed(100, m1)))
        return v
    }

    static func keyLines() throws -> [String] {
        let json = { (s: String) in CanonicalJSON.string(s).text }
        var lines: [String] = []
        for name in ["a", "b", "c"] {
            lines.append(#"{"id":\#(json(name)),"pem":\#(json(try text("keys/\(name).pub.pem"))),"key_id":"\#(try keyID(name))"}"#)
        }
        // The same key a, written otherwise (CRLF line ends, white space around the block).
        for file in try FileManager.default.contentsOfDirectory(atPath: path("keys/accepted")).sorted() {
            lines.append(
                #"{"id":\#(json("accepted/" + file)),"pem":\#(json(try text("keys/accepted/\(file)"))),"key_id":"\#(try keyID("a"))"}"#)
        }
        let refused = try FileManager.default.contentsOfDirectory(atPath: path("keys/refused")).sorted()
        for file in refused {
            lines.append(#"{"id":\#(json("refused/" + file)),"pem":\#(json(try text("keys/refused/\(file)"))),"refuse":"invalid-key"}"#)
        }
        return lines
    }

    @Test("record the envelope and key vectors (RECORD_ENVELOPES=1)", .enabled(if: record))
    func recordVectors() throws {
        try (Self.vectors().map(\.line).joined(separator: "\n") + "\n").write(
            toFile: Self.path("envelopes.jsonl"), atomically: true, encoding: .utf8)
        try (Self.keyLines().joined(separator: "\n") + "\n").write(toFile: Self.path("keys.jsonl"), atomically: true, encoding: .utf8)
    }

    // MARK: - Running them

    struct Line: Decodable {
        var id: String
        var keys: [String]
        var policy: String
        var now: Int64
        var tolerance: Int64
        var after: String?
        var restore: Bool
        var envelope: String
        var want: Want
        struct Want: Decodable, Equatable {
            var result: String
            var serial: Int64?
            var digest: String?
            var code: String?
        }
    }

    static func run(_ result: UpdateResult) -> Line.Want {
        switch result {
        case let .installed(signed): Line.Want(result: "installed", serial: signed.serial, digest: signed.digest)
        case .unchanged: Line.Want(result: "unchanged")
        case let .refused(d): Line.Want(result: "refused", code: d.code.rawValue)
        }
    }

    @Test("Swift gives every committed envelope vector its result", .disabled(if: record))
    func envelopes() throws {
        let lines = try Self.text("envelopes.jsonl").split(separator: "\n").map {
            try JSONDecoder().decode(Line.self, from: Data($0.utf8))
        }
        #expect(lines.count >= 60)
        var byID: [String: Line] = [:]
        var failed = 0
        for line in lines {
            byID[line.id] = line
            let keys = try line.keys.map { try TrustedKey(pem: Self.text("keys/\($0).pub.pem")) }
            var updater = try MachineUpdater(policy: line.policy, keys: keys, toleranceMilliseconds: line.tolerance)
            if let after = line.after {
                let first = try #require(byID[after])
                let got = Self.run(updater.offer(Data(first.envelope.utf8), now: Timestamp(millisecondsSinceEpoch: line.now)))
                #expect(got.result == "installed", "\(line.id): `after` \(after) was not installed")
            }
            let held = updater.current?.digest
            let envelope = Data(line.envelope.utf8)
            let result =
                line.restore
                ? updater.restore(envelope) : updater.offer(envelope, now: Timestamp(millisecondsSinceEpoch: line.now))
            let got = Self.run(result)
            if got != line.want { failed += 1 }
            #expect(got == line.want, "\(line.id)")
            // A refusal or no change leaves the machine held as it was.
            if got.result != "installed" { #expect(updater.current?.digest == held, "\(line.id): the machine held changed") }
        }
        #expect(failed == 0)
    }

    @Test("every committed key vector: accepted with its id, or refused with invalid-key")
    func keys() throws {
        struct KeyLine: Decodable {
            var id: String
            var pem: String
            var key_id: String?
            var refuse: String?
        }
        let lines = try Self.text("keys.jsonl").split(separator: "\n").map { try JSONDecoder().decode(KeyLine.self, from: Data($0.utf8)) }
        #expect(lines.count >= 10)
        for line in lines {
            do {
                let key = try TrustedKey(pem: line.pem)
                #expect(line.key_id == key.id, "\(line.id)")
            } catch {
                #expect(line.refuse == error.diagnostics.first?.code.rawValue, "\(line.id)")
            }
        }
    }
}
