import Foundation
import SessionPolicyDelivery

/// A token in JWS compact serialization (RFC 7515 §7.1), split and decoded but not verified:
/// its protected header, the payload's bytes, the signing input and the signature.
struct CompactJWS: Sendable {
    /// The header fields the server reads (RFC 7515 §4.1).
    struct Header: Decodable, Sendable {
        /// The signature algorithm, such as `RS256`.
        var alg: String
        /// The key id, if the issuer names the key.
        var kid: String?
        /// Header parameters the signer marks critical; the server understands none, so a
        /// token with any is refused (RFC 7515 §4.1.11).
        var crit: [String]?
    }

    let header: Header
    let payload: Data
    /// `BASE64URL(header) "." BASE64URL(payload)`, the bytes the signature covers.
    let signingInput: Data
    let signature: Data

    /// Splits and decodes `token`; a refusal says what is wrong with its form.
    init(_ token: String) throws(TokenRefusal) {
        let parts = token.utf8.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false)
        guard parts.count == 3, let headerBytes = Self.base64URL(parts[0]), let payload = Self.base64URL(parts[1]),
            let signature = Self.base64URL(parts[2])
        else {
            throw TokenRefusal("it is not a JWT (three base64url parts)", signatureMatched: false)
        }
        let header: Header
        do {
            header = try Self.decoder.decode(Header.self, from: headerBytes)
        } catch {
            throw TokenRefusal("its header is not a JSON object with an `alg`", signatureMatched: false)
        }
        if let crit = header.crit, !crit.isEmpty {
            throw TokenRefusal(
                "its header marks `\(crit.joined(separator: "`, `"))` critical, which the server does not understand",
                signatureMatched: false)
        }
        self.header = header
        self.payload = payload
        self.signature = signature
        self.signingInput = Data(token.utf8[parts[0].startIndex..<parts[1].endIndex])
    }

    /// Unpadded base64url (RFC 7515 §2), the delivery module's strict decoder.
    static func base64URL(_ bytes: Substring.UTF8View.SubSequence) -> Data? { Base64URL.decode(bytes).map { Data($0) } }

    /// Reads headers; one for all tokens (decoding does not change it).
    private static let decoder = JSONDecoder()
}

/// Why a token was refused, in a sentence the 401, its `WWW-Authenticate` header (RFC 6750
/// §3's `error_description`) and the log give: expired, not yet valid, a signature no
/// configured key made, a missing claim, the wrong issuer or audience.
public struct TokenRefusal: Error, CustomStringConvertible, Sendable {
    public var description: String
    /// Whether a configured key made the signature (then the token is this verifier's, and its
    /// other problem is the one to report).
    public var signatureMatched: Bool

    init(_ description: String, signatureMatched: Bool = true) {
        self.description = description
        self.signatureMatched = signatureMatched
    }
}
