import Crypto
import Foundation
import Logging
import NIOConcurrencyHelpers
import SessionPolicy
import SessionPolicyDelivery

/// The signed machine of each served policy (docs/envelope.md), as `GET
/// /v1/policies/{policy}/machine` serves it, signed with one of the server's signing keys: the
/// current one, or during a rotation the previous one (docs/signed-machines.md#rotating-the-signing-key).
///
/// The servers of one store serve the same envelope: a server that needs one (the policy loaded
/// or changed, or half of `validity` passed) first takes the one the store keeps for the policy
/// and key (`signed_machines`) when it is of the same machine and not past half its validity;
/// otherwise it signs, and keeps its envelope in the store unless another server kept a fresh
/// one of the same machine first, which it then serves instead. So `ETag`s agree across servers,
/// and an app polling through a load balancer downloads a machine once.
///
/// The serial is the signing time in milliseconds, and larger than every serial the store
/// keeps for the policy; the same machine keeps its serial, under every key. Servers in the
/// middle of a deploy serve the policy each has loaded.
final class SignedMachines: Sendable {
    /// One policy's envelope, under one key.
    struct Signed: Sendable {
        /// The registry's digest of the file version it was signed from.
        var fileDigest: String
        /// The machine's digest.
        var machineDigest: String
        /// The signing key's id.
        var keyID: String
        var serial: Int64
        var issuedAt: Timestamp
        /// The envelope's text, without a line feed.
        var envelope: String
        /// A strong entity tag: the quoted SHA-256 of the envelope (the same on every server
        /// that serves the envelope).
        var etag: String
    }

    /// The signing keys: `current` signs for apps that pin it; `previous`, during a rotation, for
    /// apps that pin only it or say nothing of their keys.
    struct Signers: Sendable {
        var current: MachineSigner
        var previous: MachineSigner?

        /// The key for an app pinning `pinned` (key ids; nil when the request names none): the
        /// current key if pinned, else the previous one if pinned; with none named, the previous
        /// key while there is one (an app from before the rotation), else the current one. Nil
        /// when the app pins neither.
        func signer(for pinned: [String]?) -> MachineSigner? {
            guard let pinned else { return previous ?? current }
            if pinned.contains(current.keyID) { return current }
            if let previous, pinned.contains(previous.keyID) { return previous }
            return nil
        }

        var all: [MachineSigner] { [current] + (previous.map { [$0] } ?? []) }
    }

    let validity: TimeSpan
    /// Where the servers of one store share their envelopes; nil keeps them in this server only.
    let store: (any SessionStore)?
    private let signers: NIOLockedValueBox<Signers>
    /// By policy name and key id.
    private let signed = NIOLockedValueBox<[String: Signed]>([:])
    private let logger = Logger(label: "sessionpolicy.machines")

    init(signers: Signers, validity: TimeSpan, store: (any SessionStore)?) {
        self.signers = NIOLockedValueBox(signers)
        self.validity = validity
        self.store = store
    }

    /// The keys now.
    var keys: Signers { signers.withLockedValue { $0 } }

    /// Replaces the keys (SIGHUP); envelopes of a key no longer held are forgotten.
    func replaceKeys(_ next: Signers) {
        signers.withLockedValue { $0 = next }
        let ids = Set(next.all.map(\.keyID))
        signed.withLockedValue { cache in cache = cache.filter { ids.contains($0.value.keyID) } }
    }

    /// Whether `held`, of the machine in `entry`, is still served at `now`.
    private func isFresh(_ held: Signed, fileDigest: String, now: Timestamp) -> Bool {
        held.fileDigest == fileDigest && now.millisecondsSinceEpoch < held.issuedAt.millisecondsSinceEpoch + validity.seconds * 500
    }

    /// The envelope of `entry` signed by `signer` at `now`: this server's, the store's, or new.
    func envelope(for entry: PolicyRegistry.Entry, signer: MachineSigner, now: Timestamp) async throws -> Signed {
        let name = entry.policy.name
        let slot = name + "\u{0}" + signer.keyID
        if let held = signed.withLockedValue({ $0[slot] }), isFresh(held, fileDigest: entry.fileDigest, now: now) { return held }
        let machine = entry.policy.portable
        let freshSince = Timestamp(millisecondsSinceEpoch: now.millisecondsSinceEpoch - validity.seconds * 500)
        let shared = try await store?.sharedEnvelopes(policy: name) ?? []
        if let kept = shared.first(where: { $0.keyID == signer.keyID }), kept.digest == machine.digest, kept.issuedAt > freshSince {
            return remember(kept, fileDigest: entry.fileDigest, slot: slot)
        }
        // Serials the policy has had, in the store and in this server (under every key).
        let local = signed.withLockedValue { cache in cache.filter { $0.key.hasPrefix(name + "\u{0}") }.map(\.value) }
        let known = shared.map { ($0.digest, $0.serial) } + local.map { ($0.machineDigest, $0.serial) }
        // The newest of them, if of this machine, keeps its serial; any other machine (a machine
        // that comes back after another one too) gets a larger one.
        let newest = known.max { $0.1 < $1.1 }
        let serial: Int64
        if let newest, newest.0 == machine.digest {
            serial = newest.1
        } else {
            serial = min(max(now.millisecondsSinceEpoch, (newest?.1 ?? 0) + 1, 1), EnvelopeReader.maxSerial)
        }
        let text = try signer.sign(machine, serial: serial, issuedAt: now, expiresAt: now.adding(validity))
        var mine = SharedEnvelope(policy: name, keyID: signer.keyID, digest: machine.digest, serial: serial, issuedAt: now, envelope: text)
        if let store {
            let kept = try await store.share(mine, freshSince: freshSince)
            // Another server's fresh envelope of this machine wins; one of another machine (a
            // server that has not loaded this version yet) does not.
            if kept.digest == machine.digest { mine = kept }
        }
        if mine.envelope == text {
            logger.info(
                "signed machine",
                metadata: [
                    "policy": "\(name)", "digest": "\(machine.digest)", "serial": "\(serial)", "key": "\(signer.keyID)",
                    "expires": "\(now.adding(validity))",
                ])
        }
        return remember(mine, fileDigest: entry.fileDigest, slot: slot)
    }

    private func remember(_ e: SharedEnvelope, fileDigest: String, slot: String) -> Signed {
        let etag = "\"" + SHA256.hash(data: Data(e.envelope.utf8)).map { String(format: "%02x", $0) }.joined() + "\""
        let next = Signed(
            fileDigest: fileDigest, machineDigest: e.digest, keyID: e.keyID, serial: e.serial, issuedAt: e.issuedAt, envelope: e.envelope,
            etag: etag)
        signed.withLockedValue { $0[slot] = next }
        return next
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

/// Reads the machine signing key files again (SIGHUP): a rotation starts, moves on or ends
/// without a restart (docs/signed-machines.md#rotating-the-signing-key). Keys set inline stay
/// as they were; a file that cannot be read or is not a P-256 key leaves the keys unchanged,
/// logged at error.
enum SigningKeyFiles {
    static func reload(_ configuration: ServerConfiguration, machines: SignedMachines, logger: Logger) {
        let files = configuration.keyFiles
        guard files.signingKey != nil || files.signingPreviousKey != nil else { return }
        do {
            let current =
                try files.signingKey.map { try ServerConfiguration.read($0, what: "machine signing key") }
                ?? configuration.signingKeyPEM
            guard let current else { return }
            let previous: String?
            if let path = files.signingPreviousKey {
                // The previous key's file removed ends the rotation.
                previous =
                    FileManager.default.fileExists(atPath: path)
                    ? try ServerConfiguration.read(path, what: "previous machine signing key") : nil
            } else {
                previous = configuration.signingPreviousKeyPEM
            }
            let signers = SignedMachines.Signers(
                current: try MachineSigner(privateKeyPEM: current), previous: try previous.map { try MachineSigner(privateKeyPEM: $0) })
            machines.replaceKeys(signers)
            logger.info(
                "signing key files read again",
                metadata: ["key": "\(signers.current.keyID)", "previous_key": "\(signers.previous?.keyID ?? "none")"])
        } catch {
            logger.error("signing key files not reloaded; the keys stay as they were", metadata: ["error": "\(error)"])
        }
    }
}
