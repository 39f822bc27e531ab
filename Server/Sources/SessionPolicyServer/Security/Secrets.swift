import Crypto
import Foundation

/// Secrets and tickets.
enum Secrets {
    /// Compares two secrets in time that depends only on their lengths, never on where they differ.
    static func equal(_ a: String, _ b: String) -> Bool {
        // Compare digests so the lengths of the secrets themselves do not leak either.
        let x = SHA256.hash(data: Data(a.utf8))
        let y = SHA256.hash(data: Data(b.utf8))
        var difference: UInt8 = 0
        for (p, q) in zip(x, y) { difference |= p ^ q }
        return difference == 0
    }

    /// A new one-time ticket: 32 random bytes, base64url.
    static func newTicket() -> String {
        var rng = SystemRandomNumberGenerator()
        let bytes = (0..<32).map { _ in UInt8.random(in: 0...255, using: &rng) }
        return Data(bytes).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }

    /// What the store keeps of a one-time credential (a ticket, a used ID token): its SHA-256,
    /// so a copy of the database gives none of them.
    static func hash(ticket: String) -> String {
        SHA256.hash(data: Data(ticket.utf8)).map { String(format: "%02x", $0) }.joined()
    }
}
