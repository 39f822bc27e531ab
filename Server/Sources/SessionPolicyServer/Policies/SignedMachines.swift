import Crypto
import Foundation
import Logging
import NIOConcurrencyHelpers
import SessionPolicy
import SessionPolicyDelivery

/// The signed machine of each served policy (docs/envelope.md), as `GET
/// /v1/policies/{policy}/machine` serves it: signed the first time it is asked for after the
/// policy loads or changes (a reload), and again once half of its validity has passed, so a
/// client always receives an envelope valid for at least half of `validity`.
///
/// The serial is the signing time in milliseconds, and larger than the last serial this server
/// gave the policy; a new signature of the same machine keeps its serial. Two servers, or one
/// restarted, may give the same machine different serials: an updater takes that as the
/// machine it holds (`unchanged`), never as a rollback. A server whose clock is set back
/// further than its last serial signs a changed machine with a smaller serial, which updaters
/// refuse until the clock passes it.
final class SignedMachines: Sendable {
    /// One policy's envelope.
    struct Signed: Sendable {
        /// The registry's digest of the file version it was signed from.
        var fileDigest: String
        /// The machine's digest.
        var machineDigest: String
        var serial: Int64
        var issuedAt: Timestamp
        /// The envelope's text, without a line feed.
        var envelope: String
        /// A strong entity tag: the quoted SHA-256 of the envelope.
        var etag: String
    }

    let signer: MachineSigner
    let validity: TimeSpan
    private let signed = NIOLockedValueBox<[String: Signed]>([:])
    private let logger = Logger(label: "sessionpolicy.machines")

    init(signer: MachineSigner, validity: TimeSpan) {
        self.signer = signer
        self.validity = validity
    }

    /// The envelope of `entry` at `now`, signed again when the file changed or half the validity passed.
    func envelope(for entry: PolicyRegistry.Entry, now: Timestamp) throws -> Signed {
        let name = entry.policy.name
        return try signed.withLockedValue { cache in
            let held = cache[name]
            if let held, held.fileDigest == entry.fileDigest,
                now.millisecondsSinceEpoch < held.issuedAt.millisecondsSinceEpoch + validity.seconds * 500
            {
                return held
            }
            let machine = entry.policy.portable
            let serial: Int64
            if let held, held.machineDigest == machine.digest {
                serial = held.serial
            } else {
                serial = min(max(now.millisecondsSinceEpoch, (held?.serial ?? 0) + 1, 1), EnvelopeReader.maxSerial)
            }
            let envelope = try signer.sign(machine, serial: serial, issuedAt: now, expiresAt: now.adding(validity))
            let etag = "\"" + SHA256.hash(data: Data(envelope.utf8)).map { String(format: "%02x", $0) }.joined() + "\""
            let next = Signed(
                fileDigest: entry.fileDigest, machineDigest: machine.digest, serial: serial, issuedAt: now, envelope: envelope, etag: etag)
            cache[name] = next
            logger.info(
                "signed machine",
                metadata: [
                    "policy": "\(name)", "digest": "\(machine.digest)", "serial": "\(serial)", "key": "\(signer.keyID)",
                    "expires": "\(now.adding(validity))",
                ])
            return next
        }
    }

    /// Whether an `If-None-Match` header names `etag` (weak comparison, RFC 9110 §13.1.2; `*` matches any).
    static func matches(_ header: String, etag: String) -> Bool {
        for tag in header.split(separator: ",") {
            var tag = tag.trimmingCharacters(in: .whitespaces)
            if tag == "*" { return true }
            if tag.hasPrefix("W/") { tag.removeFirst(2) }
            if tag == etag { return true }
        }
        return false
    }
}
