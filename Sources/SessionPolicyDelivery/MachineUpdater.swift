public import Foundation
public import SessionPolicy

/// What an updater did with an envelope (docs/envelope.md, "Reading an envelope").
public enum UpdateResult: Sendable {
    /// Verified, and newer than the machine held (or nothing was held): decide with it from now
    /// on, and store its `envelope` bytes.
    case installed(SignedMachine)
    /// Verified, and the machine held (the same digest) with a serial not larger: nothing changes.
    case unchanged
    /// Refused by the check the diagnostic names; the machine held stays in use.
    case refused(Diagnostic)
}

/// Keeps the machine an app decides with, and replaces it only with a verified, newer signed
/// machine (docs/envelope.md). Built with at least one pinned key: there is no way to install a
/// machine without verifying it. Pure: the app fetches the bytes (URLSession) and gives the time.
///
/// ```swift
/// var updater = try MachineUpdater(policy: "spendiq", keys: [TrustedKey(pem: pinnedPEM)])
/// if let stored { _ = updater.restore(stored) }            // at start
/// switch updater.offer(fetched, now: Timestamp(Date())) {  // after each fetch
/// case let .installed(signed): save(signed.envelope)
/// case .unchanged: break
/// case let .refused(diagnostic): log(diagnostic)          // keep deciding with updater.current
/// }
/// ```
public struct MachineUpdater: Sendable {
    /// How far the device's clock may be from the signer's, unless the app sets another: 10 minutes.
    public static let defaultToleranceMilliseconds: Int64 = 600_000

    /// The policy this updater takes machines of.
    public let policy: String
    /// The pinned keys.
    public let keys: [TrustedKey]
    /// The pinned keys' ids, in order: what a fetch sends the server as `?keys=ID,ID`, so that it
    /// signs with a key this app pins (docs/signed-machines.md).
    public var keyIDs: [String] { keys.map(\.id) }
    /// The tolerance of the validity checks, in milliseconds.
    public let toleranceMilliseconds: Int64
    /// The machine held: the last one installed or restored, nil before any.
    public private(set) var current: SignedMachine?

    /// An updater for `policy` that trusts `keys`. Throws `invalid-key` when `keys` is empty,
    /// `invalid-value` for a negative tolerance.
    public init(policy: String, keys: [TrustedKey], toleranceMilliseconds: Int64 = defaultToleranceMilliseconds) throws(DiagnosticError) {
        guard !keys.isEmpty else {
            throw DiagnosticError([
                Diagnostic.error(
                    .invalidKey, "an updater needs at least one pinned key", at: nil,
                    help: "pin the public key the machines are signed with; unsigned machines are never installed")
            ])
        }
        guard toleranceMilliseconds >= 0 else {
            throw DiagnosticError([
                Diagnostic.error(
                    .invalidValue, "the clock tolerance is \(toleranceMilliseconds) ms, less than 0", at: nil,
                    help: "give 0 or more milliseconds; the default is 10 minutes")
            ])
        }
        self.policy = policy
        self.keys = keys
        self.toleranceMilliseconds = toleranceMilliseconds
    }

    /// Restores the envelope an app stored (or shipped): every check but the validity times,
    /// since it was valid when it was installed. Installs it, or refuses it.
    public mutating func restore(_ envelope: Data) -> UpdateResult {
        switch EnvelopeReader.read(envelope, keys: keys, policy: policy, now: nil, toleranceMilliseconds: toleranceMilliseconds) {
        case let .failure(error): return .refused(error.diagnostics[0])
        case let .success(signed): return install(signed)
        }
    }

    /// Offers a fetched envelope at the device's time `now`: installs it when it passes every
    /// check and is newer than the machine held; otherwise nothing changes.
    public mutating func offer(_ envelope: Data, now: Timestamp) -> UpdateResult {
        switch EnvelopeReader.read(envelope, keys: keys, policy: policy, now: now, toleranceMilliseconds: toleranceMilliseconds) {
        case let .failure(error): return .refused(error.diagnostics[0])
        case let .success(signed): return install(signed)
        }
    }

    /// Check 17: a larger serial installs (the same machine too: the serial held moves up, so an
    /// older envelope cannot come back); the same machine with a serial not larger changes
    /// nothing; anything else is a rollback.
    private mutating func install(_ signed: SignedMachine) -> UpdateResult {
        if let held = current, signed.serial <= held.serial {
            if signed.digest == held.digest { return .unchanged }
            return .refused(
                Diagnostic.error(
                    .rollback,
                    "the envelope's serial \(signed.serial) is not larger than the serial \(held.serial) of the machine held, and its machine is another",
                    at: nil,
                    help: signed.serial == held.serial
                        ? "a serial names one machine; sign the new machine with a larger serial"
                        : "an older machine is never installed over a newer one; the machine held stays in use"))
        }
        current = signed
        return .installed(signed)
    }
}
