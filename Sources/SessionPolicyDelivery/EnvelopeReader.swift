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
        func at(_ offset: Int) -> SourceLocation {
            let before = raw[..<min(offset, raw.count)]
            let line = before.count(where: { $0 == 0x0A }) + 1
            let column = offset - (before.lastIndex(of: 0x0A).map { $0 + 1 } ?? 0) + 1
            return SourceLocation(file: file, line: line, column: column)
        }
        func refuse(_ code: DiagnosticCode, _ message: String, _ offset: Int = 0, help: String) -> Result<SignedMachine, DiagnosticError> {
            .failure(DiagnosticError([.error(code, message, at: at(offset), help: help)]))
        }
        let fromSigner = "the envelope is not one that `policyctl sign` or `policyctl serve` writes; fetch it again, or sign it again"

        // 1. Size.
        if raw.count > maxBytes {
            return refuse(
                .envelopeTooLarge, "the envelope is \(raw.count) bytes, more than the limit of \(maxBytes) bytes",
                help: "a machine document is at most 1 MiB, and its envelope under 4 MiB; this is not an envelope")
        }
        // 2. Three base64url segments.
        var start = 0
        var end = raw.count
        let space: Set<UInt8> = [0x20, 0x09, 0x0D, 0x0A]
        while start < end, space.contains(raw[start]) { start += 1 }
        while end > start, space.contains(raw[end - 1]) { end -= 1 }
        let parts = raw[start..<end].split(separator: UInt8(ascii: "."), maxSplits: 3, omittingEmptySubsequences: false)
        guard parts.count == 3 else {
            return refuse(
                .envelopeMalformed,
                "an envelope is three base64url segments separated by `.`; this has \(min(parts.count, 4) == 4 ? "more than 3" : String(parts.count))",
                start, help: "the envelope may be truncated; \(fromSigner)")
        }
        let names = ["header", "payload", "signature"]
        var decoded: [[UInt8]] = []
        for (i, part) in parts.enumerated() {
            if i < 2, part.isEmpty {
                return refuse(.envelopeMalformed, "the envelope's \(names[i]) segment is empty", part.startIndex, help: fromSigner)
            }
            guard let bytes = Base64URL.decode(part) else {
                return refuse(
                    .envelopeMalformed, "the envelope's \(names[i]) segment is not base64url (RFC 4648 §5, without `=` padding)",
                    part.startIndex, help: fromSigner)
            }
            decoded.append(bytes)
        }
        // 3. The header.
        let headerAt = parts[0].startIndex
        guard let header = object(decoded[0]), let alg = string(header["alg"]), let kid = string(header["kid"]),
            let typ = string(header["typ"]), header.count == 3
        else {
            return refuse(
                .envelopeMalformed, "the envelope's header is not a JSON object of exactly the strings `alg`, `kid` and `typ`",
                headerAt, help: fromSigner)
        }
        // 4, 5. The type and the algorithm.
        if !typ.utf8.elementsEqual(type.utf8) {
            return refuse(
                .unsupportedEnvelope, "the envelope's `typ` is `\(typ)`, not `\(type)`", headerAt,
                help: "this runtime reads signed machines of `\(format)`; a newer envelope needs a newer runtime")
        }
        if !alg.utf8.elementsEqual(algorithm.utf8) {
            return refuse(
                .unsupportedAlgorithm, "the envelope's `alg` is `\(alg)`: only `\(algorithm)` is accepted", headerAt,
                help: "signed machines are signed with ECDSA on P-256 (ES256) and nothing else, `none` least of all")
        }
        // 6, 7, 8. The signature, with a pinned key.
        let signatureAt = parts[2].startIndex
        if decoded[2].isEmpty {
            return refuse(
                .signatureMissing, "the envelope carries no signature", signatureAt,
                help: "an updater installs only signed machines; the signature may have been stripped on the way")
        }
        guard let key = keys.first(where: { $0.id.utf8.elementsEqual(kid.utf8) }) else {
            return refuse(
                .unpinnedKey, "the envelope is signed with key `\(kid)`, which is not pinned", headerAt,
                help: "pinned: \(keys.map { "`\($0.id)`" }.joined(separator: ", ")); pin the signer's public key, or sign with a pinned key"
            )
        }
        let signed = raw[parts[0].startIndex..<parts[1].endIndex]
        guard decoded[2].count == 64, let signature = try? P256.Signing.ECDSASignature(rawRepresentation: decoded[2]),
            key.key.isValidSignature(signature, for: Data(signed))
        else {
            return refuse(
                .badSignature, "the envelope's signature does not verify with key `\(kid)`", signatureAt,
                help: "the envelope was changed after it was signed, or signed with another key under this key's id")
        }
        // 9, 10, 11. The payload.
        let payloadAt = parts[1].startIndex
        guard let payload = object(decoded[1]), let format = string(payload["format"]) else {
            return refuse(
                .envelopeMalformed, "the envelope's payload is not a JSON object with a string `format`", payloadAt, help: fromSigner)
        }
        if !format.utf8.elementsEqual(Self.format.utf8) {
            return refuse(
                .unsupportedEnvelope, "the envelope's `format` is `\(format)`, not `\(Self.format)`", payloadAt,
                help: "this runtime reads `\(Self.format)`; a newer envelope needs a newer runtime")
        }
        let members = ["format", "policy", "serial", "issued_at", "expires_at", "digest", "machine"]
        if let extra = payload.keys.sorted().first(where: { !members.contains($0) }) {
            return refuse(.envelopeMalformed, "the envelope's payload has an unknown member `\(extra)`", payloadAt, help: fromSigner)
        }
        guard let name = string(payload["policy"]), !name.isEmpty,
            let serial = integer(payload["serial"], in: 1...maxSerial),
            let issued = integer(payload["issued_at"], in: 0...maxTime),
            let expires = integer(payload["expires_at"], in: 0...maxTime), expires > issued,
            let digest = string(payload["digest"]), isDigest(digest),
            let document = string(payload["machine"])
        else {
            return refuse(
                .envelopeMalformed,
                "the envelope's payload does not hold the seven members of docs/envelope.md with their types and bounds",
                payloadAt, help: fromSigner)
        }
        // 12. The policy.
        if let policy, !name.isExactly(policy) {
            return refuse(
                .wrongPolicy, "the envelope holds the machine of policy `\(name)`, not `\(policy)`", payloadAt,
                help: "fetch the machine from the address of policy `\(policy)`")
        }
        // 13, 14. The validity, by the device's clock.
        if let now {
            let time = now.millisecondsSinceEpoch
            if issued > time.addingClamped(tolerance) {
                return refuse(
                    .notYetValid,
                    "the envelope was issued at \(Timestamp(millisecondsSinceEpoch: issued)), later than this device's time \(now) allows",
                    payloadAt, help: "the device's clock is behind, or the signer's ahead; the machine held stays in use")
            }
            if expires < time.addingClamped(-tolerance) {
                return refuse(
                    .expired, "the envelope expired at \(Timestamp(millisecondsSinceEpoch: expires)), before this device's time \(now)",
                    payloadAt, help: "an old envelope was replayed, or the device's clock is ahead; the machine held stays in use")
            }
        }
        // 15, 16. The machine.
        let machine: PolicyMachine
        do {
            machine = try PolicyMachine(document: Data(document.utf8), file: "\(file) (machine)")
        } catch {
            let first = error.diagnostics.first
            return refuse(
                .machineRefused,
                "the envelope's machine document is refused: \(first.map { "\($0.code): \($0.message)" } ?? "no diagnostic")",
                payloadAt, help: "the signer signed a machine this runtime cannot run; a newer machine format needs a newer runtime")
        }
        if !machine.digest.utf8.elementsEqual(digest.utf8) || !machine.name.isExactly(name) {
            return refuse(
                .machineMismatch,
                "the envelope names machine `\(digest)` of policy `\(name)` but holds `\(machine.digest)` of policy `\(machine.name)`",
                payloadAt, help: fromSigner)
        }
        return .success(
            SignedMachine(
                policy: name, serial: serial, issuedAt: Timestamp(millisecondsSinceEpoch: issued),
                expiresAt: Timestamp(millisecondsSinceEpoch: expires), digest: digest, keyID: kid, machine: machine, envelope: bytes))
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
