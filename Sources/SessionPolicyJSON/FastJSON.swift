public import SessionPolicy

/// A fast, allocation-light codec for the JSON a high-throughput server reads and writes:
/// session states, events and the request bodies that carry them, and outcomes.
///
/// Decoding has one contract: **the same values and the same refusals as the reference**, the
/// strict JSON reader `JSONSyntax.parse` followed by `SyntaxReader.sessionState(_:path:)`,
/// `event(_:path:)`, `evaluationInput(_:path:)` or `evaluationBatch(_:limit:)`. The reference
/// is the only source of diagnostics. A reader here returns either exactly the value the
/// reference reads from the same bytes without diagnostics, or nil, and the caller then falls
/// back to the reference for the value or its diagnostics. It never returns a value for bytes
/// the reference refuses. It returns nil (falls back) for everything it does not decide itself:
///
/// - unknown, duplicate or missing required keys, and events without the context their kind
///   needs (`launch` without `network`, see `SyntaxReader.checkRequiredContext`);
/// - any value of another JSON type than the canonical one (the reference reads `"user": 7`
///   as the name `7` and `"failures": {"biometric": "2"}` as an error; both fall back here),
///   and `null`;
/// - words outside a vocabulary, times `Timestamp.parse` rejects, relative times (`+3d`),
///   integers with a sign, fraction or exponent, or too large for `Int`;
/// - names whose first or last character is not printable ASCII (the reference trims Unicode
///   whitespace, which this codec does not re-implement);
/// - strings with escapes or control characters, invalid UTF-8 (see `FastJSONScanner`);
/// - anything that is not JSON: trailing commas, trailing bytes, comments, ...;
/// - documents over their `InputLimits` (bytes, values), which the reference refuses.
///
/// `FastJSONTests` checks the contract differentially, against the reference, on the shipped
/// corpus and on many generated, mutated and damaged documents.
///
/// Encoding writes exactly what `JSONEncoder` with `[.sortedKeys, .withoutEscapingSlashes]`
/// writes for the same value (see `FastJSON+Encoding.swift`).
///
/// `StrictJSON` is the same shapes read by the reference, for the fall-back.
public enum FastJSON {

    /// One evaluation: a session state (signed out when absent) and an event.
    public typealias Request = (state: SessionState, event: Event)

    // MARK: Documents

    /// A session state document: `{"state": "active", "user": "alice", ...}`.
    public static func sessionState(_ bytes: UnsafeRawBufferPointer) -> SessionState? {
        document(bytes) { s in
            var state = SessionState()
            return readState(&s, into: &state) ? state : nil
        }
    }

    /// A session state document.
    package static func sessionState(_ bytes: [UInt8]) -> SessionState? {
        bytes.withUnsafeBytes { sessionState($0) }
    }

    /// An event document: `{"type": "launch", "time": "2026-03-01T09:00:00Z", "network": ...}`.
    public static func event(_ bytes: UnsafeRawBufferPointer) -> Event? {
        document(bytes) { s in
            var event = blankEvent
            return readEvent(&s, into: &event) ? event : nil
        }
    }

    /// An event document.
    package static func event(_ bytes: [UInt8]) -> Event? {
        bytes.withUnsafeBytes { event($0) }
    }

    /// An evaluation request: `{"state": {...}, "event": {...}}` with exactly these keys;
    /// `state` may be left out and then means `SessionState()` (as in `policyctl eval`).
    public static func evaluationRequest(_ bytes: UnsafeRawBufferPointer) -> Request? {
        document(bytes) { s in
            var request = blankRequest
            return readRequest(&s, into: &request) ? request : nil
        }
    }

    /// An evaluation request.
    package static func evaluationRequest(_ bytes: [UInt8]) -> Request? {
        bytes.withUnsafeBytes { evaluationRequest($0) }
    }

    /// A batch of evaluation requests: `{"items": [{"state": {...}, "event": {...}}, ...]}`,
    /// each item shaped like `evaluationRequest(_:)`, of at most `maxBytes` bytes and
    /// `maxItems` items. Nil if any item is not certain, or the batch is over a limit.
    public static func batchRequest(_ bytes: UnsafeRawBufferPointer, maxBytes: Int, maxItems: Int) -> [Request]? {
        guard let items = batchRequest(bytes, limits: .batch(bytes: maxBytes, items: maxItems)), items.count <= maxItems
        else { return nil }
        return items
    }

    /// A batch of evaluation requests within `limits`.
    package static func batchRequest(_ bytes: UnsafeRawBufferPointer, limits: InputLimits = .files) -> [Request]? {
        document(bytes, limits: limits) { s in
            var items: [Request] = []
            var seen = false
            let ok = s.object { s, key in
                guard key.equals("items"), !seen else { return false }
                seen = true
                return s.array { s in
                    // Read in place: states and events are a few hundred bytes each.
                    items.append(blankRequest)
                    return readRequest(&s, into: &items[items.count - 1])
                }
            }
            return ok && seen ? items : nil
        }
    }

    /// A batch of evaluation requests.
    package static func batchRequest(_ bytes: [UInt8], limits: InputLimits = .files) -> [Request]? {
        bytes.withUnsafeBytes { batchRequest($0, limits: limits) }
    }

    /// An event request: `{"event": {...}}`.
    public static func eventRequest(_ bytes: UnsafeRawBufferPointer) -> Event? {
        document(bytes) { s in
            var event = blankEvent
            var seen = false
            let ok = s.object { s, key in
                guard key.equals("event"), !seen else { return false }
                seen = true
                return readEvent(&s, into: &event)
            }
            return ok && seen ? event : nil
        }
    }

    /// An event request.
    package static func eventRequest(_ bytes: [UInt8]) -> Event? {
        bytes.withUnsafeBytes { eventRequest($0) }
    }

    /// Reads one object with `read` and requires nothing but whitespace around it.
    private static func document<T>(
        _ bytes: UnsafeRawBufferPointer, limits: InputLimits = .files, _ read: (inout FastJSONScanner) -> T?
    ) -> T? {
        guard bytes.count <= limits.bytes else { return nil }
        var s = FastJSONScanner(bytes, maxNodes: limits.nodes)
        s.skipByteOrderMark()
        s.skipSpace()
        guard s.next == UInt8(ascii: "{"), let value = read(&s) else { return nil }
        s.skipSpace()
        return s.atEnd ? value : nil
    }

    // MARK: Shapes

    /// What the in-place readers start from: `Event(kind, at:)` with every optional unset.
    static var blankEvent: Event { Event(.launch, at: Timestamp(millisecondsSinceEpoch: 0)) }
    static var blankRequest: Request { (SessionState(), blankEvent) }

    /// `{"state": {...}, "event": {...}}` into `request`, which must be `blankRequest`.
    static func readRequest(_ s: inout FastJSONScanner, into request: inout Request) -> Bool {
        var seenState = false
        var seenEvent = false
        let ok = s.object { s, key in
            if key.equals("state") {
                guard !seenState else { return false }
                seenState = true
                return readState(&s, into: &request.state)
            }
            if key.equals("event") {
                guard !seenEvent else { return false }
                seenEvent = true
                return readEvent(&s, into: &request.event)
            }
            return false
        }
        return ok && seenEvent
    }

    /// A session state, as `SyntaxReader.sessionState(_:path:)` reads it without a base time,
    /// into `state`, which must be `SessionState()`.
    static func readState(_ s: inout FastJSONScanner, into state: inout SessionState) -> Bool {
        var seen: UInt32 = 0
        let ok = s.object { s, key in
            guard let field = SessionState.Field(key), seen & field.bit == 0 else { return false }
            seen |= field.bit
            switch field {
            case .state:
                guard let v = s.keyword(machineStates) else { return false }
                state.state = v
            case .user:
                state.user = s.name()
                return state.user != nil
            case .device:
                state.device = s.name()
                return state.device != nil
            case .authMode:
                state.authMode = s.keyword(authModes)
                return state.authMode != nil
            case .lastIdPLogin:
                state.lastIdPLogin = s.time()
                return state.lastIdPLogin != nil
            case .lastOnline:
                state.lastOnline = s.time()
                return state.lastOnline != nil
            case .lastActivity:
                state.lastActivity = s.time()
                return state.lastActivity != nil
            case .highestTime:
                state.highestTime = s.time()
                return state.highestTime != nil
            case .failures:
                return readFailures(&s, into: &state.failures)
            case .readOnly:
                guard let v = s.boolean() else { return false }
                state.readOnly = v
            case .biometricLocked:
                guard let v = s.boolean() else { return false }
                state.biometricLocked = v
            }
            return true
        }
        return ok && seen & SessionState.Field.state.bit != 0
    }

    /// `{"biometric": 0, "offline_login": 0, "idp_login": 0}`, every key optional, into
    /// `failures`, which must be all zeros.
    static func readFailures(_ s: inout FastJSONScanner, into failures: inout SessionState.Failures) -> Bool {
        var seen: UInt32 = 0
        return s.object { s, key in
            guard let field = SessionState.Failures.Field(key), seen & field.bit == 0, let n = s.integer() else { return false }
            seen |= field.bit
            switch field {
            case .biometric: failures.biometric = n
            case .offlineLogin: failures.offlineLogin = n
            case .idpLogin: failures.idpLogin = n
            }
            return true
        }
    }

    /// An event, as `SyntaxReader.event(_:path:)` reads it, into `e`, which must be `blankEvent`.
    static func readEvent(_ s: inout FastJSONScanner, into e: inout Event) -> Bool {
        var seen: UInt32 = 0
        let ok = s.object { s, key in
            guard let field = Event.Field(key), seen & field.bit == 0 else { return false }
            seen |= field.bit
            switch field {
            case .kind:
                guard let v = s.keyword(eventKinds) else { return false }
                e.kind = v
            case .time:
                guard let v = s.time() else { return false }
                e.time = v
            case .network:
                e.network = s.keyword(networks)
                return e.network != nil
            case .user:
                e.user = s.name()
                return e.user != nil
            case .device:
                return readDevice(&s, into: &e.device)
            case .authMode:
                e.authMode = s.keyword(authModes)
                return e.authMode != nil
            case .cause:
                e.cause = s.keyword(causes)
                return e.cause != nil
            case .unsyncedItems:
                e.unsyncedItems = s.integer()
                return e.unsyncedItems != nil
            case .attributes:
                return readAttributes(&s, into: &e.exactAttributes)
            case .appID:
                e.appID = s.name()
                return e.appID != nil
            }
            return true
        }
        guard ok, seen & Event.Field.kind.bit != 0, seen & Event.Field.time.bit != 0 else { return false }
        // `EventKind.requiredFacts`: here a key is present exactly when its value is set.
        return e.kind.requiredFacts.firstMissing(in: e) == nil
    }

    /// `{"id": "d1", "keystore": "hardware", "integrity": "ok"}`, every key optional, into
    /// `device`, which must be empty.
    static func readDevice(_ s: inout FastJSONScanner, into device: inout Event.DeviceFacts) -> Bool {
        var seen: UInt32 = 0
        return s.object { s, key in
            guard let field = Event.DeviceFacts.Field(key), seen & field.bit == 0 else { return false }
            seen |= field.bit
            switch field {
            case .id:
                device.id = s.name()
                return device.id != nil
            case .keystore:
                device.keystore = s.keyword(keystores)
                return device.keystore != nil
            case .integrity:
                device.integrity = s.keyword(integrities)
                return device.integrity != nil
            }
        }
    }

    /// `{"license": "revoked", ...}`: any keys, string values (empty ones too), into
    /// `attributes`, which must be empty. A key with the scalars of an earlier one falls back,
    /// so the reference's duplicate-key rule is never second-guessed.
    static func readAttributes(_ s: inout FastJSONScanner, into attributes: inout [ExactName: String]) -> Bool {
        s.object { s, key in
            guard let value = s.string() else { return false }
            let k = ExactName(String(decoding: key, as: UTF8.self))
            guard attributes[k] == nil else { return false }
            attributes[k] = String(decoding: value, as: UTF8.self)
            return true
        }
    }
}

// MARK: - Vocabularies

/// The words of a vocabulary packed into 32-byte blocks, for matching bytes without making a
/// `String`. Built from `allCases`, so it has the words `SyntaxReader.keyword` accepts;
/// matching is byte for byte (stricter than `String`'s canonical equivalence, so never wider).
/// A word longer than 32 bytes is never matched, so it falls back to the reference.
struct KeywordTable<K: PolicyKeyword>: Sendable {
    struct Packed: Equatable, Sendable {
        var a: UInt64 = 0, b: UInt64 = 0, c: UInt64 = 0, d: UInt64 = 0

        init?(_ bytes: UnsafeRawBufferPointer) {
            guard bytes.count <= 32 else { return nil }
            withUnsafeMutableBytes(of: &self) { $0.copyMemory(from: bytes) }
        }
    }

    private let words: [(packed: Packed, count: Int, value: K)]

    init() {
        words = K.allCases.compactMap { word in
            var raw = word.rawValue
            return raw.withUTF8 { utf8 in Packed(UnsafeRawBufferPointer(utf8)).map { ($0, utf8.count, word) } }
        }
    }

    /// The word spelled exactly by `bytes`.
    func value(_ bytes: UnsafeRawBufferPointer) -> K? {
        guard let packed = Packed(bytes) else { return nil }
        for word in words where word.count == bytes.count && word.packed == packed { return word.value }
        return nil
    }
}

extension FastJSON {
    static let machineStates = KeywordTable<MachineState>()
    static let authModes = KeywordTable<AuthMode>()
    static let eventKinds = KeywordTable<EventKind>()
    static let networks = KeywordTable<Network>()
    static let causes = KeywordTable<RefreshFailureCause>()
    static let keystores = KeywordTable<Keystore>()
    static let integrities = KeywordTable<Integrity>()
}

// MARK: - Typed values

extension FastJSONScanner {
    /// A string naming something (`SyntaxReader.name`): non-empty, and (stricter than the
    /// reference's Unicode trimming) starting and ending with printable non-space ASCII.
    mutating func name() -> String? {
        guard let text = string(), let first = text.first, let last = text.last,
            (0x21...0x7E).contains(first), (0x21...0x7E).contains(last)
        else { return nil }
        return String(decoding: text, as: UTF8.self)
    }

    /// An absolute RFC 3339 time (`SyntaxReader.time` without a base): `Timestamp.parse`'s rules.
    mutating func time() -> Timestamp? {
        string().flatMap { Timestamp.parse(utf8: $0) }
    }

    /// A word of `table`'s vocabulary, written as a string.
    mutating func keyword<K>(_ table: KeywordTable<K>) -> K? {
        string().flatMap { table.value($0) }
    }
}
