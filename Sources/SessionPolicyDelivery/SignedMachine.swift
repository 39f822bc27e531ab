public import Foundation
public import SessionPolicy

/// A machine that arrived in a verified envelope (docs/envelope.md), with what was signed
/// beside it.
public struct SignedMachine: Sendable {
    /// The policy's name.
    public let policy: String
    /// The envelope's serial: a later machine of the policy has a larger one.
    public let serial: Int64
    /// When it was signed.
    public let issuedAt: Timestamp
    /// The end of its validity.
    public let expiresAt: Timestamp
    /// The machine's digest (`sha256:...`).
    public let digest: String
    /// The id of the key that signed it.
    public let keyID: String
    /// The machine, ready to evaluate.
    public let machine: PolicyMachine
    /// The envelope's bytes as received: what an app stores to restore the machine at its next start.
    public let envelope: Data
}
