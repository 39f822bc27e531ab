public import SessionPolicy

/// Writing outcomes and session states as JSON, byte for byte what `JSONEncoder` with
/// `outputFormatting = [.sortedKeys, .withoutEscapingSlashes]` writes for the same value:
/// keys in byte order, no spaces, `Outcome`'s explicit `null`s, `SessionState`'s absent keys
/// left out, and strings escaped as Foundation does on Linux (`\"`, `\\`, `\b`, `\f`, `\n`,
/// `\r`, `\t`, other controls as `\u00xx`; `/`, DEL and non-ASCII written as they are).
extension FastJSON {
    /// Appends `outcome` as JSON.
    public static func append(_ outcome: Outcome, to out: inout [UInt8]) {
        let bound = JSONWriter.bound(outcome)
        let start = out.count
        out.append(contentsOf: repeatElement(0, count: bound))
        let written = out.withUnsafeMutableBufferPointer { buffer in
            var w = JSONWriter(buffer.baseAddress! + start, capacity: bound)
            w.outcome(outcome)
            return w.written
        }
        out.removeLast(bound - written)
    }

    /// Appends `state` as JSON (keys of absent values left out, as the synthesized encoding does).
    public static func append(_ state: SessionState, to out: inout [UInt8]) {
        let bound = JSONWriter.bound(state)
        let start = out.count
        out.append(contentsOf: repeatElement(0, count: bound))
        let written = out.withUnsafeMutableBufferPointer { buffer in
            var w = JSONWriter(buffer.baseAddress! + start, capacity: bound)
            w.state(state)
            return w.written
        }
        out.removeLast(bound - written)
    }

    /// The body of a batch response, `{"results":[<outcome>,...]}`: what `JSONEncoder` writes
    /// for a value whose only key `results` holds `outcomes`. The array's capacity is the sum
    /// of `JSONWriter.bound(_:)`, about 2.4 KB per outcome for about 0.5 KB written: one
    /// allocation, no copy, some memory held until the response is sent.
    public static func batchResponse(_ outcomes: [Outcome]) -> [UInt8] {
        var bound = 16
        for i in outcomes.indices { bound += JSONWriter.bound(outcomes[i]) + 1 }
        return [UInt8](unsafeUninitializedCapacity: bound) { buffer, count in
            var w = JSONWriter(buffer.baseAddress!, capacity: bound)
            w.literal(#"{"results":["#)
            for i in outcomes.indices {
                if i > 0 { w.byte(UInt8(ascii: ",")) }
                w.outcome(outcomes[i])
            }
            w.literal("]}")
            count = w.written
        }
    }
}

/// Writes JSON into memory sized beforehand with `bound(_:)`. Every write checks that it stays
/// within the capacity (a trap, never an overrun, if a bound were ever wrong), once per piece
/// rather than once per byte.
struct JSONWriter {
    private let start: UnsafeMutablePointer<UInt8>
    private let end: UnsafeMutablePointer<UInt8>
    private var p: UnsafeMutablePointer<UInt8>
    /// The last day written by `time(_:)` (days since the epoch) and its date, as
    /// `Timestamp.civilFromDays` gives it: times in one response mostly share a few days.
    private var day = Int.min
    private var date = (year: 0, month: 0, day: 0)

    init(_ start: UnsafeMutablePointer<UInt8>, capacity: Int) {
        self.start = start
        self.end = start + capacity
        self.p = start
    }

    /// Bytes written so far.
    var written: Int { p - start }

    /// Room for `n` more bytes.
    private func reserve(_ n: Int) { precondition(end - p >= n, "JSONWriter bound too small") }

    // MARK: Bounds

    /// Most bytes `outcome(_:)` writes: 512 for keys, punctuation, `null`s, numbers and the
    /// notice delay (they need at most about 250), plus 6 per byte of text (an escaped control
    /// character takes 6; `string(_:)` checks for that much room), words and notice names
    /// counted at their longest, plus the state's bound.
    static func bound(_ o: Outcome) -> Int {
        512 + 6 * (o.message.utf8.count + o.reason.rawValue.utf8.count) + outcomeWords + bound(o.state)
    }

    /// Most bytes `state(_:)` writes: 512 for keys, punctuation, numbers and times (at most
    /// about 420), plus 6 per byte of text, words counted at their longest.
    static func bound(_ s: SessionState) -> Int {
        512 + 6 * ((s.user?.utf8.count ?? 0) + (s.device?.utf8.count ?? 0)) + stateWords
    }

    /// Room for an outcome's words: its decision, scope, auth mode and every notice name.
    static let outcomeWords =
        6 * (longest(Decision.self) + longest(Scope.self) + longest(AuthMode.self) + Notices.named.reduce(0) { $0 + $1.0.utf8.count })
    /// Room for a state's words: its machine state and auth mode.
    static let stateWords = 6 * (longest(MachineState.self) + longest(AuthMode.self))

    private static func longest<K: PolicyKeyword>(_: K.Type) -> Int { K.allCases.map(\.rawValue.utf8.count).max() ?? 0 }

    // MARK: Values

    /// An outcome: every key, absent values as `null`, in `Outcome.Field.sortedByKey` order
    /// (written out, which saves a loop per object; `FastJSONTests` compare the bytes with
    /// `JSONEncoder`'s, so the order cannot drift).
    mutating func outcome(_ o: Outcome) {
        typealias K = Outcome.Field
        key(K.authMode, first: true)
        keywordOrNull(o.authMode)
        key(K.decision)
        keywordOrNull(o.decision)
        key(K.message)
        string(o.message)
        key(K.noticeDelay)
        if let delay = o.noticeDelay { span(delay) } else { literal("null") }
        key(K.notices)
        notices(o.notices)
        key(K.reason)
        string(o.reason.rawValue)
        key(K.scope)
        keywordOrNull(o.scope)
        key(K.state)
        state(o.state)
        key(K.transition)
        int(o.transition)
        byte(UInt8(ascii: "}"))
    }

    /// The names of `notices`, in `Notices.named` order.
    mutating func notices(_ notices: Notices) {
        byte(UInt8(ascii: "["))
        var first = true
        for (name, notice) in Notices.named where notices.contains(notice) {
            if !first { byte(UInt8(ascii: ",")) }
            first = false
            string(name)
        }
        byte(UInt8(ascii: "]"))
    }

    /// A state: absent values left out, the others in `SessionState.Field.sortedByKey` order
    /// (written out; `FastJSONTests` compare the bytes with `JSONEncoder`'s). `biometric_locked`
    /// is always written, so only `auth_mode` can come first.
    mutating func state(_ s: SessionState) {
        typealias K = SessionState.Field
        var first = true
        if let v = s.authMode {
            key(K.authMode, first: true)
            string(v.rawValue)
            first = false
        }
        key(K.biometricLocked, first: first)
        bool(s.biometricLocked)
        if let v = s.device {
            key(K.device)
            string(v)
        }
        key(K.failures)
        failures(s.failures)
        if let t = s.highestTime {
            key(K.highestTime)
            time(t)
        }
        if let t = s.lastActivity {
            key(K.lastActivity)
            time(t)
        }
        if let t = s.lastIdPLogin {
            key(K.lastIdPLogin)
            time(t)
        }
        if let t = s.lastOnline {
            key(K.lastOnline)
            time(t)
        }
        key(K.readOnly)
        bool(s.readOnly)
        key(K.state)
        string(s.state.rawValue)
        if let v = s.user {
            key(K.user)
            string(v)
        }
        byte(UInt8(ascii: "}"))
    }

    /// `{"biometric":N,"idp_login":N,"offline_login":N}`.
    mutating func failures(_ f: SessionState.Failures) {
        typealias K = SessionState.Failures.Field
        key(K.biometric, first: true)
        int(f.biometric)
        key(K.idpLogin)
        int(f.idpLogin)
        key(K.offlineLogin)
        int(f.offlineLogin)
        byte(UInt8(ascii: "}"))
    }

    /// `"key":` of `field`, after a comma unless it is the object's first key (then after `{`).
    @inline(__always)
    private mutating func key<F: JSONField>(_ field: F, first: Bool = false) {
        let name = field.name
        let n = name.utf8CodeUnitCount
        reserve(n + 4)
        p[0] = first ? UInt8(ascii: "{") : UInt8(ascii: ",")
        p[1] = UInt8(ascii: "\"")
        p += 2
        p.initialize(from: name.utf8Start, count: n)
        p += n
        p[0] = UInt8(ascii: "\"")
        p[1] = UInt8(ascii: ":")
        p += 2
    }

    // MARK: Pieces

    mutating func byte(_ b: UInt8) {
        reserve(1)
        p.initialize(to: b)
        p += 1
    }

    /// A literal's UTF-8 as it is.
    mutating func literal(_ text: StaticString) {
        let n = text.utf8CodeUnitCount
        reserve(n)
        p.initialize(from: text.utf8Start, count: n)
        p += n
    }

    mutating func bool(_ value: Bool) {
        if value { literal("true") } else { literal("false") }
    }

    /// A keyword's word as a JSON string, or `null`.
    mutating func keywordOrNull<K: PolicyKeyword>(_ value: K?) {
        if let value { string(value.rawValue) } else { literal("null") }
    }

    /// A JSON string, escaped as `JSONEncoder` escapes it.
    mutating func string(_ text: String) {
        if text.utf8.withContiguousStorageIfAvailable({ string(utf8: $0) }) == nil {
            Array(text.utf8).withUnsafeBufferPointer { string(utf8: $0) }
        }
    }

    private mutating func string(utf8: UnsafeBufferPointer<UInt8>) {
        reserve(2 + 6 * utf8.count)
        p.initialize(to: UInt8(ascii: "\""))
        p += 1
        guard let base = utf8.baseAddress else {
            p.initialize(to: UInt8(ascii: "\""))
            p += 1
            return
        }
        let n = utf8.count
        var i = 0
        while i < n {
            // Eight bytes at a time, up to the first that needs escaping.
            while i + 8 <= n {
                let w = UnsafeRawPointer(base + i).loadUnaligned(as: UInt64.self)
                let flags = Self.escapeFlags(UInt64(littleEndian: w))
                if flags != 0 {
                    let plain = flags.trailingZeroBitCount >> 3
                    p.initialize(from: base + i, count: plain)
                    p += plain
                    i += plain
                    break
                }
                UnsafeMutableRawPointer(p).storeBytes(of: w, as: UInt64.self)
                p += 8
                i += 8
            }
            guard i < n else { break }
            let b = base[i]
            i += 1
            guard b < 0x20 || b == UInt8(ascii: "\"") || b == UInt8(ascii: "\\") else {
                p.initialize(to: b)
                p += 1
                continue
            }
            p[0] = UInt8(ascii: "\\")
            switch b {
            case UInt8(ascii: "\""): p[1] = UInt8(ascii: "\"")
            case UInt8(ascii: "\\"): p[1] = UInt8(ascii: "\\")
            case 0x08: p[1] = UInt8(ascii: "b")
            case 0x0C: p[1] = UInt8(ascii: "f")
            case 0x0A: p[1] = UInt8(ascii: "n")
            case 0x0D: p[1] = UInt8(ascii: "r")
            case 0x09: p[1] = UInt8(ascii: "t")
            default:
                let hex: StaticString = "0123456789abcdef"
                p[1] = UInt8(ascii: "u")
                p[2] = UInt8(ascii: "0")
                p[3] = UInt8(ascii: "0")
                p[4] = hex.utf8Start[Int(b >> 4)]
                p[5] = hex.utf8Start[Int(b & 0xF)]
                p += 4
            }
            p += 2
        }
        p.initialize(to: UInt8(ascii: "\""))
        p += 1
    }

    /// The high bit of each of the 8 bytes in `w` (first byte lowest) that `JSONEncoder`
    /// escapes: a quote, a backslash or a control below 0x20. As in `FastJSONScanner.flags`,
    /// only the lowest set bit is exact.
    @inline(__always)
    static func escapeFlags(_ w: UInt64) -> UInt64 {
        let ones: UInt64 = 0x0101_0101_0101_0101
        let high: UInt64 = 0x8080_8080_8080_8080
        func zeroBytes(_ v: UInt64) -> UInt64 { (v &- ones) & ~v & high }
        return ((w &- ones &* 0x20) & ~w & high) | zeroBytes(w ^ (ones &* 0x22)) | zeroBytes(w ^ (ones &* 0x5C))
    }

    /// An integer in decimal, as `JSONEncoder` writes `Int`.
    mutating func int(_ value: Int) {
        if value < 0 { byte(UInt8(ascii: "-")) }
        digits(UInt64(value.magnitude))
    }

    /// The decimal digits of `value`.
    mutating func digits(_ value: UInt64) {
        var n = 1
        var rest = value
        while rest >= 10 {
            rest /= 10
            n += 1
        }
        reserve(n)
        rest = value
        for i in stride(from: n - 1, through: 0, by: -1) {
            p[i] = UInt8(truncatingIfNeeded: rest % 10) + 0x30
            rest /= 10
        }
        p += n
    }

    /// `value` (0...99) as two digits.
    private mutating func two(_ value: Int) {
        p[0] = UInt8(truncatingIfNeeded: value / 10) + 0x30
        p[1] = UInt8(truncatingIfNeeded: value % 10) + 0x30
        p += 2
    }

    /// A time as a JSON string: `Timestamp.description` (`2026-03-01T09:30:00Z`, `.250` for
    /// milliseconds), written without making a `String` for years 0001 to 9999.
    mutating func time(_ t: Timestamp) {
        let seconds = t.secondsSinceEpoch
        let millis = Int(t.millisecondsSinceEpoch - seconds * 1000)
        let days = Int(seconds >= 0 ? seconds / 86_400 : (seconds - 86_399) / 86_400)
        let rem = Int(seconds - Int64(days) * 86_400)
        if days != day {
            day = days
            date = Timestamp.civilFromDays(days)
        }
        let (y, m, d) = date
        guard (1...9999).contains(y) else {
            description(t)
            return
        }
        reserve(26)  // "YYYY-MM-DDTHH:MM:SS.mmmZ" and the quotes
        p[0] = UInt8(ascii: "\"")
        p += 1
        two(y / 100)
        two(y % 100)
        p[0] = UInt8(ascii: "-")
        p += 1
        two(m)
        p[0] = UInt8(ascii: "-")
        p += 1
        two(d)
        p[0] = UInt8(ascii: "T")
        p += 1
        two(rem / 3600)
        p[0] = UInt8(ascii: ":")
        p += 1
        two(rem % 3600 / 60)
        p[0] = UInt8(ascii: ":")
        p += 1
        two(rem % 60)
        if millis > 0 {
            p[0] = UInt8(ascii: ".")
            p[1] = UInt8(truncatingIfNeeded: millis / 100) + 0x30
            p += 2
            two(millis % 100)
        }
        p[0] = UInt8(ascii: "Z")
        p[1] = UInt8(ascii: "\"")
        p += 2
    }

    /// A time outside years 0001-9999 (never read, but representable): its description, which
    /// has nothing to escape (digits, `-`, `:`, `T`, `.`, `Z`).
    @inline(never)
    private mutating func description(_ t: Timestamp) {
        var text = t.description
        text.withUTF8 { utf8 in
            reserve(utf8.count + 2)
            p[0] = UInt8(ascii: "\"")
            p += 1
            p.initialize(from: utf8.baseAddress!, count: utf8.count)
            p += utf8.count
            p[0] = UInt8(ascii: "\"")
            p += 1
        }
    }

    /// A time span as a JSON string: `TimeSpan.description` (`1d12h`, `0s`).
    mutating func span(_ span: TimeSpan) {
        byte(UInt8(ascii: "\""))
        if span.seconds == 0 {
            literal("0s")
        } else {
            // The units of `TimeSpan.description`, largest first, weeks left out.
            var rest = span.seconds
            unit(&rest, 86_400, "d")
            unit(&rest, 3600, "h")
            unit(&rest, 60, "m")
            unit(&rest, 1, "s")
        }
        byte(UInt8(ascii: "\""))
    }

    private mutating func unit(_ rest: inout Int64, _ size: Int64, _ unit: Unicode.Scalar) {
        guard rest >= size else { return }
        digits(UInt64(rest / size))
        byte(UInt8(ascii: unit))
        rest %= size
    }
}
