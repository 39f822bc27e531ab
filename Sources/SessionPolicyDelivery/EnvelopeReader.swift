import Crypto
public import Foundation
public import SessionPolicy

/// Reads and verifies a signed machine, checks 1 to 16 of docs/envelope.md in their order: the
/// first that fails is the refusal. Pure: the time is the caller's.
public enum EnvelopeReader {
    /// The largest envelope read (check 1): 4 MiB.
    public static let maxBytes = 4 * 1024 * 1024
    /// The header's `typ`.
    public static let type = "sessionpolicy-machine+jws"
    /// The payload's `format`.
    public static let format = "sessionpolicy-envelope/1"
    /// The only algorithm.
    public static let algorithm = "ES256"
    /// The largest serial: 2^53 − 1, exact in every runtime's numbers.
    public static let maxSerial: Int64 = 9_007_199_254_740_991
    /// The latest time an envelope may name: the end of year 9999, in milliseconds.
    public static let maxTime: Int64 = 253_402_300_799_999

    static let limits = InputLimits(
        bytes: maxBytes, nodes: 64, depth: 8, hint: "an envelope's header and payload are small objects; see docs/envelope.md")

    /// Reads `bytes` (from `file`, named in diagnostics) with the pinned `keys`. `policy` is the
    /// policy expected (nil: any, as `policyctl inspect` reads); `now` is the device's time for
    /// the validity checks (nil: none, as a restore reads); `tolerance` widens the validity on
    /// both sides, in milliseconds.
    public static func read(
        _ bytes: Data, keys: [TrustedKey], policy: String?, now: Timestamp?, toleranceMilliseconds tolerance: Int64,
        file: String = "envelope"
    ) -> Result<SignedMachine, DiagnosticError> {
        let raw = [UInt8](bytes)
        do {
            let segments = try Segments(raw)
            let kid = try checkHeader(segments)
            try checkSignature(segments, raw: raw, kid: kid, keys: keys)
            let payload = try Payload(segments)
            try checkPolicyAndValidity(payload, policy: policy, now: now, tolerance: tolerance, at: segments.payloadAt)
            let machine = try checkMachine(payload, file: file, at: segments.payloadAt)
            return .success(
                SignedMachine(
                    policy: payload.name, serial: payload.serial, issuedAt: Timestamp(millisecondsSinceEpoch: payload.issued),
                    expiresAt: Timestamp(millisecondsSinceEpoch: payload.expires), digest: payload.digest, keyID: kid,
                    machine: machine, envelope: bytes))
        } catch {
            let before = raw[..<min(error.offset, raw.count)]
            let line = before.count(where: { $0 == 0x0A }) + 1
            let column = error.offset - (before.lastIndex(of: 0x0A).map { $0 + 1 } ?? 0) + 1
            let location = SourceLocation(file: file, line: line, column: column)
            return .failure(DiagnosticError([.error(error.code, error.message, at: location, help: error.help)]))
        }
    }

    /// The first check that failed: its code, message, hint, and the byte offset it points at.
    struct Refusal: Error {
        var code: DiagnosticCode
        var message: String
        var offset: Int
        var help: String

        init(_ code: DiagnosticCode, _ message: String, _ offset: Int = 0, help: String) {
            (self.code, self.message, self.offset, self.help) = (code, message, offset, help)
        }
    }

    static let fromSigner = "the envelope is not one that `policyctl sign` or `policyctl serve` writes; fetch it again, or sign it again"

    /// Checks 1 and 2: the size, and three base64url segments, decoded.
    struct Segments {
        /// Each segment's bytes in the envelope (offsets into it), and decoded.
        var ranges: [Range<Int>] = []
        var decoded: [[UInt8]] = []
        var headerAt: Int { ranges[0].lowerBound }
        var payloadAt: Int { ranges[1].lowerBound }
        var signatureAt: Int { ranges[2].lowerBound }

        init(_ raw: [UInt8]) throws(Refusal) {
            if raw.count > maxBytes {
                throw Refusal(
                    .envelopeTooLarge, "the envelope is \(raw.count) bytes, more than the limit of \(maxBytes) bytes",
                    help: "a machine document is at most 1 MiB, and its envelope under 4 MiB; this is not an envelope")
            }
            var start = 0
            var end = raw.count
            let space: Set<UInt8> = [0x20, 0x09, 0x0D, 0x0A]
            while start < end, space.contains(raw[start]) { start += 1 }
            while end > start, space.contains(raw[end - 1]) { end -= 1 }
            let parts = raw[start..<end].split(separator: UInt8(ascii: "."), maxSplits: 3, omittingEmptySubsequences: false)
            guard parts.count == 3 else {
                throw Refusal(
                    .envelopeMalformed,
                    "an envelope is three base64url segments separated by `.`; this has \(min(parts.count, 4) == 4 ? "more than 3" : String(parts.count))",
                    start, help: "the envelope may be truncated; \(fromSigner)")
            }
            let names = ["header", "payload", "signature"]
            for (i, part) in parts.enumerated() {
                if i < 2, part.isEmpty {
                    throw Refusal(.envelopeMalformed, "the envelope's \(names[i]) segment is empty", part.startIndex, help: fromSigner)
                }
                guard let bytes = Base64URL.decode(part) else {
                    throw Refusal(
                        .envelopeMalformed, "the envelope's \(names[i]) segment is not base64url (RFC 4648 §5, without `=` padding)",
                        part.startIndex, help: fromSigner)
                }
                ranges.append(part.startIndex..<part.endIndex)
                decoded.append(bytes)
            }
        }
    }

    /// Checks 3, 4 and 5: the header, its type and its algorithm. Returns the key id.
    static func checkHeader(_ segments: Segments) throws(Refusal) -> String {
        let headerAt = segments.headerAt
        guard let header = object(segments.decoded[0]), let alg = string(header["alg"]), let kid = string(header["kid"]),
            let typ = string(header["typ"]), header.count == 3
        else {
            throw Refusal(
                .envelopeMalformed, "the envelope's header is not a JSON object of exactly the strings `alg`, `kid` and `typ`",
                headerAt, help: fromSigner)
        }
        if !typ.utf8.elementsEqual(type.utf8) {
            throw Refusal(
                .unsupportedEnvelope, "the envelope's `typ` is `\(typ)`, not `\(type)`", headerAt,
                help: "this runtime reads signed machines of `\(format)`; a newer envelope needs a newer runtime")
        }
        if !alg.utf8.elementsEqual(algorithm.utf8) {
            throw Refusal(
                .unsupportedAlgorithm, "the envelope's `alg` is `\(alg)`: only `\(algorithm)` is accepted", headerAt,
                help: "signed machines are signed with ECDSA on P-256 (ES256) and nothing else, `none` least of all")
        }
        return kid
    }

    /// Checks 6, 7 and 8: a signature, by a pinned key, that verifies.
    static func checkSignature(_ segments: Segments, raw: [UInt8], kid: String, keys: [TrustedKey]) throws(Refusal) {
        let signature = segments.decoded[2]
        if signature.isEmpty {
            throw Refusal(
                .signatureMissing, "the envelope carries no signature", segments.signatureAt,
                help: "an updater installs only signed machines; the signature may have been stripped on the way")
        }
        guard let key = keys.first(where: { $0.id.utf8.elementsEqual(kid.utf8) }) else {
            throw Refusal(
                .unpinnedKey, "the envelope is signed with key `\(kid)`, which is not pinned", segments.headerAt,
                help: "pinned: \(keys.map { "`\($0.id)`" }.joined(separator: ", ")); pin the signer's public key, or sign with a pinned key"
            )
        }
        let signed = raw[segments.ranges[0].lowerBound..<segments.ranges[1].upperBound]
        guard signature.count == 64, let ecdsa = try? P256.Signing.ECDSASignature(rawRepresentation: signature),
            key.key.isValidSignature(ecdsa, for: Data(signed))
        else {
            throw Refusal(
                .badSignature, "the envelope's signature does not verify with key `\(kid)`", segments.signatureAt,
                help: "the envelope was changed after it was signed, or signed with another key under this key's id")
        }
    }

    /// Checks 9, 10 and 11: the payload, its format, and its seven members.
    struct Payload {
        var name: String
        var serial: Int64
        var issued: Int64
        var expires: Int64
        var digest: String
        var document: String

        init(_ segments: Segments) throws(Refusal) {
            let payloadAt = segments.payloadAt
            guard let payload = object(segments.decoded[1]), let format = string(payload["format"]) else {
                throw Refusal(
                    .envelopeMalformed, "the envelope's payload is not a JSON object with a string `format`", payloadAt, help: fromSigner)
            }
            if !format.utf8.elementsEqual(EnvelopeReader.format.utf8) {
                throw Refusal(
                    .unsupportedEnvelope, "the envelope's `format` is `\(format)`, not `\(EnvelopeReader.format)`", payloadAt,
                    help: "this runtime reads `\(EnvelopeReader.format)`; a newer envelope needs a newer runtime")
            }
            let members = ["format", "policy", "serial", "issued_at", "expires_at", "digest", "machine"]
            if let extra = payload.keys.sorted().first(where: { !members.contains($0) }) {
                throw Refusal(.envelopeMalformed, "the envelope's payload has an unknown member `\(extra)`", payloadAt, help: fromSigner)
            }
            guard let name = string(payload["policy"]), !name.isEmpty,
                let serial = integer(payload["serial"], in: 1...maxSerial),
                let issued = integer(payload["issued_at"], in: 0...maxTime),
                let expires = integer(payload["expires_at"], in: 0...maxTime), expires > issued,
                let digest = string(payload["digest"]), isDigest(digest),
                let document = string(payload["machine"])
            else {
                throw Refusal(
                    .envelopeMalformed,
                    "the envelope's payload does not hold the seven members of docs/envelope.md with their types and bounds",
                    payloadAt, help: fromSigner)
            }
            (self.name, self.serial, self.issued, self.expires, self.digest, self.document) = (
                name, serial, issued, expires, digest, document
            )
        }
    }

    /// Checks 12, 13 and 14: the policy expected, and the validity by the device's clock.
    static func checkPolicyAndValidity(
        _ payload: Payload, policy: String?, now: Timestamp?, tolerance: Int64, at payloadAt: Int
    ) throws(Refusal) {
        if let policy, !payload.name.isExactly(policy) {
            throw Refusal(
                .wrongPolicy, "the envelope holds the machine of policy `\(payload.name)`, not `\(policy)`", payloadAt,
                help: "fetch the machine from the address of policy `\(policy)`")
        }
        guard let now else { return }
        let time = now.millisecondsSinceEpoch
        if payload.issued > time.addingClamped(tolerance) {
            throw Refusal(
                .notYetValid,
                "the envelope was issued at \(Timestamp(millisecondsSinceEpoch: payload.issued)), later than this device's time \(now) allows",
                payloadAt, help: "the device's clock is behind, or the signer's ahead; the machine held stays in use")
        }
        if payload.expires < time.addingClamped(-tolerance) {
            throw Refusal(
                .expired, "the envelope expired at \(Timestamp(millisecondsSinceEpoch: payload.expires)), before this device's time \(now)",
                payloadAt, help: "an old envelope was replayed, or the device's clock is ahead; the machine held stays in use")
        }
    }

    /// Checks 15 and 16: a machine this runtime runs, the one the payload names.
    static func checkMachine(_ payload: Payload, file: String, at payloadAt: Int) throws(Refusal) -> PolicyMachine {
        let machine: PolicyMachine
        do {
            machine = try PolicyMachine(document: Data(payload.document.utf8), file: "\(file) (machine)")
        } catch {
            let first = error.diagnostics.first
            throw Refusal(
                .machineRefused,
                "the envelope's machine document is refused: \(first.map { "\($0.code): \($0.message)" } ?? "no diagnostic")",
                payloadAt, help: "the signer signed a machine this runtime cannot run; a newer machine format needs a newer runtime")
        }
        if !machine.digest.utf8.elementsEqual(payload.digest.utf8) || !machine.name.isExactly(payload.name) {
            throw Refusal(
                .machineMismatch,
                "the envelope names machine `\(payload.digest)` of policy `\(payload.name)` but holds `\(machine.digest)` of policy `\(machine.name)`",
                payloadAt, help: fromSigner)
        }
        return machine
    }

    /// A JSON object's members by name, or nil when the bytes are not a JSON object (a key
    /// twice included).
    private static func object(_ bytes: [UInt8]) -> [String: SyntaxNode]? {
        guard case let .success(node?) = JSONSyntax.parse(Data(bytes), file: "envelope", limits: limits),
            case let .mapping(pairs) = node.kind
        else { return nil }
        var members: [String: SyntaxNode] = [:]
        for (key, value) in pairs {
            guard case let .scalar(name, _) = key.kind else { return nil }
            members[name] = value
        }
        return members
    }

    private static func string(_ node: SyntaxNode?) -> String? {
        guard case let .scalar(text, isPlain: false)? = node?.kind else { return nil }
        return text
    }

    /// A JSON number written as an integer (no fraction, no exponent) within `range`.
    private static func integer(_ node: SyntaxNode?, in range: ClosedRange<Int64>) -> Int64? {
        guard case let .scalar(text, isPlain: true)? = node?.kind else { return nil }
        let digits = text.hasPrefix("-") ? text.dropFirst() : Substring(text)
        guard !digits.isEmpty, digits.allSatisfy({ $0.isASCII && $0.isNumber }), digits == "0" || !digits.hasPrefix("0"),
            let value = Int64(text), range.contains(value)
        else { return nil }
        return value
    }

    private static func isDigest(_ text: String) -> Bool {
        let hex = text.utf8.dropFirst(7)
        return text.hasPrefix("sha256:") && hex.count == 64
            && hex.allSatisfy { (0x30...0x39).contains($0) || (0x61...0x66).contains($0) }
    }
}

extension Int64 {
    /// `self + other`, held at the bounds instead of overflowing.
    fileprivate func addingClamped(_ other: Int64) -> Int64 {
        let (sum, overflow) = addingReportingOverflow(other)
        return overflow ? (other > 0 ? .max : .min) : sum
    }
}
