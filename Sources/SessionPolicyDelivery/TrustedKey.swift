import Crypto
public import Foundation
public import SessionPolicy

/// A P-256 public key an app pins to verify signed machines (docs/envelope.md, "Keys"): the PEM
/// `PUBLIC KEY` that `openssl pkey -pubout` writes, a SubjectPublicKeyInfo with the point
/// uncompressed (91 bytes of DER). Its id is the lowercase hex SHA-256 of those bytes.
public struct TrustedKey: Sendable, Hashable {
    /// The key id an envelope's `kid` names.
    public let id: String
    /// The 91 bytes of DER.
    public let der: Data
    let key: P256.Signing.PublicKey

    /// The 26 bytes every uncompressed P-256 SubjectPublicKeyInfo starts with: the sequences, the
    /// algorithm `id-ecPublicKey`, the curve `prime256v1`, and the bit string's header.
    static let prefix: [UInt8] = [
        0x30, 0x59, 0x30, 0x13, 0x06, 0x07, 0x2a, 0x86, 0x48, 0xce, 0x3d, 0x02, 0x01, 0x06, 0x08, 0x2a, 0x86, 0x48, 0xce, 0x3d,
        0x03, 0x01, 0x07, 0x03, 0x42, 0x00,
    ]

    /// Reads a PEM public key. Throws `invalid-key` for anything but an uncompressed P-256 key
    /// (another curve, RSA, a compressed point, a private key, a point not on the curve, text
    /// that is not PEM); `file` names the key in the diagnostic.
    public init(pem: String, file: String = "public key") throws(DiagnosticError) {
        func refuse(_ message: String) -> DiagnosticError {
            DiagnosticError([
                .error(
                    .invalidKey, message, at: SourceLocation(file: file, line: 1, column: 1),
                    help:
                        "pin the PEM `PUBLIC KEY` of a P-256 key, as `openssl pkey -in signing.key.pem -pubout` writes it")
            ])
        }
        guard let der = PEM.body(of: pem, label: "PUBLIC KEY") else {
            if PEM.body(of: pem, label: "PRIVATE KEY") != nil || PEM.body(of: pem, label: "EC PRIVATE KEY") != nil {
                throw refuse("this is a private key; an app pins the public key, and never holds the private one")
            }
            throw refuse("not a PEM public key (`-----BEGIN PUBLIC KEY-----` ... `-----END PUBLIC KEY-----`)")
        }
        guard der.count == 91, der.starts(with: Self.prefix), der[26] == 0x04 else {
            throw refuse("not an uncompressed P-256 (prime256v1) public key: envelopes are signed with ES256 only")
        }
        guard let key = try? P256.Signing.PublicKey(x963Representation: der.dropFirst(26)) else {
            throw refuse("the key's point is not on the P-256 curve")
        }
        self.key = key
        self.der = Data(der)
        self.id = Self.keyID(der)
    }

    /// The lowercase hex SHA-256 of a SubjectPublicKeyInfo's DER.
    static func keyID(_ der: some DataProtocol) -> String {
        Crypto.SHA256.hash(data: der).map { String($0 >> 4, radix: 16) + String($0 & 15, radix: 16) }.joined()
    }

    public static func == (a: TrustedKey, b: TrustedKey) -> Bool { a.der == b.der }
    public func hash(into hasher: inout Hasher) { hasher.combine(der) }
}

/// PEM text (RFC 7468), read strictly (docs/envelope.md, "Keys"): one block and nothing but
/// white space around it; inside, white space is ignored and the rest must be the one base64
/// text of its bytes (padding as needed, unused bits zero).
enum PEM {
    /// The DER bytes of the text when it is one block labelled `label`, or nil.
    static func body(of text: String, label: String) -> [UInt8]? {
        let begin = "-----BEGIN \(label)-----", end = "-----END \(label)-----"
        let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
        guard trimmed.hasPrefix(begin), trimmed.hasSuffix(end), trimmed.count >= begin.count + end.count else { return nil }
        let inner = trimmed.dropFirst(begin.count).dropLast(end.count)
        let base64 = String(inner.filter { !$0.isWhitespace })
        guard !base64.contains("-"), let data = Data(base64Encoded: base64), data.base64EncodedString() == base64 else { return nil }
        return [UInt8](data)
    }
}
