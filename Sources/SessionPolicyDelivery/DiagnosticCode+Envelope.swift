public import SessionPolicy

/// The refusals of a signed machine (docs/envelope.md, "Reading an envelope"), one per check,
/// the same in every runtime.
extension DiagnosticCode {
    /// A pinned or signing key that is not a P-256 key in PEM.
    public static let invalidKey = DiagnosticCode("invalid-key")
    /// More than 4 MiB (check 1).
    public static let envelopeTooLarge = DiagnosticCode("envelope-too-large")
    /// Not three base64url segments, or a header or payload that is not what the format says (checks 2, 3, 9, 11).
    public static let envelopeMalformed = DiagnosticCode("envelope-malformed")
    /// Another `typ` or payload `format` (checks 4, 10).
    public static let unsupportedEnvelope = DiagnosticCode("unsupported-envelope")
    /// An `alg` other than `ES256` (check 5).
    public static let unsupportedAlgorithm = DiagnosticCode("unsupported-algorithm")
    /// No signature (check 6).
    public static let signatureMissing = DiagnosticCode("signature-missing")
    /// A `kid` that names no pinned key (check 7).
    public static let unpinnedKey = DiagnosticCode("unpinned-key")
    /// A signature that does not verify (check 8).
    public static let badSignature = DiagnosticCode("bad-signature")
    /// The machine of another policy (check 12).
    public static let wrongPolicy = DiagnosticCode("wrong-policy")
    /// Issued later than the device's clock allows (check 13).
    public static let notYetValid = DiagnosticCode("not-yet-valid")
    /// Past its validity (check 14).
    public static let expired = DiagnosticCode("expired")
    /// A machine document the runtime refuses (check 15).
    public static let machineRefused = DiagnosticCode("machine-refused")
    /// A machine whose digest or name is not the payload's (check 16).
    public static let machineMismatch = DiagnosticCode("machine-mismatch")
    /// An older machine, or a serial signed twice, offered over the one held (check 17).
    public static let rollback = DiagnosticCode("rollback")
}
