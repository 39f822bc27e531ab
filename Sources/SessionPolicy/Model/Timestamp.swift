/// A point in time with millisecond precision, written as RFC 3339 text
/// (`2026-03-01T09:30:00Z`, `2026-03-01T09:30:00.250Z`, or with an offset such as `+02:00`).
/// Years 0001 to 9999 only, so every stored time can be read back.
///
/// The evaluator never reads a clock: every event carries its `Timestamp`.
public struct Timestamp: Hashable, Comparable, Sendable, Codable, CustomStringConvertible {
    /// Milliseconds since the Unix epoch.
    public var millisecondsSinceEpoch: Int64

    /// Creates a timestamp from milliseconds since the Unix epoch.
    public init(millisecondsSinceEpoch: Int64) { self.millisecondsSinceEpoch = millisecondsSinceEpoch }

    /// Creates a timestamp from whole seconds since the Unix epoch.
    public init(secondsSinceEpoch: Int64) { self.millisecondsSinceEpoch = secondsSinceEpoch * 1000 }

    /// Whole seconds since the Unix epoch (rounded down).
    public var secondsSinceEpoch: Int64 {
        millisecondsSinceEpoch >= 0 ? millisecondsSinceEpoch / 1000 : (millisecondsSinceEpoch - 999) / 1000
    }

    /// The earliest and latest times accepted: 0001-01-01T00:00:00Z and 9999-12-31T23:59:59.999Z.
    public static let earliest = Timestamp(millisecondsSinceEpoch: -62_135_596_800_000)
    public static let latest = Timestamp(millisecondsSinceEpoch: 253_402_300_799_999)

    /// Whether the time is within `earliest...latest`.
    public var isInRange: Bool { self >= Self.earliest && self <= Self.latest }

    public static func < (lhs: Timestamp, rhs: Timestamp) -> Bool { lhs.millisecondsSinceEpoch < rhs.millisecondsSinceEpoch }

    /// `self + span`.
    public func adding(_ span: TimeSpan) -> Timestamp { Timestamp(millisecondsSinceEpoch: millisecondsSinceEpoch + span.seconds * 1000) }
    /// `self - span`.
    public func subtracting(_ span: TimeSpan) -> Timestamp {
        Timestamp(millisecondsSinceEpoch: millisecondsSinceEpoch - span.seconds * 1000)
    }

    /// Parses RFC 3339: `YYYY-MM-DDTHH:MM:SS` with an optional fraction (milliseconds kept, finer
    /// digits dropped) and `Z` or `±HH:MM`. A plain date `YYYY-MM-DD` means midnight UTC.
    /// Returns nil for anything else, and for times outside years 0001 to 9999.
    public static func parse(_ text: String) -> Timestamp? {
        var text = text
        return text.withUTF8 { parse(utf8: UnsafeRawBufferPointer($0)) }
    }

    /// Parses RFC 3339 from UTF-8 bytes, by the same rules as `parse(_:)` (which calls it), so
    /// byte-level readers such as the wire codec (`SessionPolicyJSON`) accept exactly the times the text readers accept.
    package static func parse(utf8 b: UnsafeRawBufferPointer) -> Timestamp? {
        @inline(__always) func num(_ from: Int, _ count: Int) -> Int? {
            guard from + count <= b.count else { return nil }
            var v = 0
            for i in from..<(from + count) {
                let c = b[i]
                guard c >= 48, c <= 57 else { return nil }
                v = v * 10 + Int(c - 48)
            }
            return v
        }
        guard b.count >= 10, let y = num(0, 4), b[4] == 45, let mo = num(5, 2), b[7] == 45, let d = num(8, 2) else { return nil }
        guard (1...12).contains(mo), d >= 1, d <= daysIn(month: mo, year: y) else { return nil }
        var h = 0, mi = 0, s = 0, offset = 0, millis = 0
        if b.count > 10 {
            guard b.count >= 20, b[10] == 84 || b[10] == 116 || b[10] == 32,
                let hh = num(11, 2), b[13] == 58, let mm = num(14, 2), b[16] == 58, let ss = num(17, 2),
                hh < 24, mm < 60, ss < 60
            else { return nil }
            (h, mi, s) = (hh, mm, ss)
            var i = 19
            if i < b.count, b[i] == 46 {
                i += 1
                let start = i
                while i < b.count, b[i] >= 48, b[i] <= 57 {
                    if i - start < 3 { millis = millis * 10 + Int(b[i] - 48) }
                    i += 1
                }
                guard i > start else { return nil }
                for _ in min(3, i - start)..<3 { millis *= 10 }
            }
            guard i < b.count else { return nil }
            if b[i] == 90 || b[i] == 122 {
                guard i + 1 == b.count else { return nil }
            } else if b[i] == 43 || b[i] == 45 {
                guard i + 6 == b.count, let oh = num(i + 1, 2), b[i + 3] == 58, let om = num(i + 4, 2), oh < 24, om < 60 else { return nil }
                offset = (oh * 3600 + om * 60) * (b[i] == 43 ? 1 : -1)
            } else {
                return nil
            }
        }
        guard y >= 1 else { return nil }
        let days = daysFromCivil(year: y, month: mo, day: d)
        let seconds = Int64(days) * 86_400 + Int64(h * 3600 + mi * 60 + s - offset)
        let t = Timestamp(millisecondsSinceEpoch: seconds * 1000 + Int64(millis))
        return t.isInRange ? t : nil
    }

    /// RFC 3339 in UTC: `2026-03-01T09:30:00Z`, with `.250` when there are milliseconds.
    public var description: String {
        let secondsSinceEpoch = self.secondsSinceEpoch
        let millis = Int(millisecondsSinceEpoch - secondsSinceEpoch * 1000)
        let days = Int(secondsSinceEpoch >= 0 ? secondsSinceEpoch / 86_400 : (secondsSinceEpoch - 86_399) / 86_400)
        let rem = Int(secondsSinceEpoch - Int64(days) * 86_400)
        let (y, m, d) = Self.civilFromDays(days)
        func two(_ v: Int) -> String { v < 10 ? "0\(v)" : "\(v)" }
        var year = String(y)
        while year.count < 4 { year = "0" + year }
        var fraction = ""
        if millis > 0 {
            fraction = String(millis)
            while fraction.count < 3 { fraction = "0" + fraction }
            fraction = "." + fraction
        }
        return "\(year)-\(two(m))-\(two(d))T\(two(rem / 3600)):\(two(rem % 3600 / 60)):\(two(rem % 60))\(fraction)Z"
    }

    static func daysIn(month: Int, year: Int) -> Int {
        switch month {
        case 2: return (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 29 : 28
        case 4, 6, 9, 11: return 30
        default: return 31
        }
    }

    // Howard Hinnant's days_from_civil / civil_from_days.
    static func daysFromCivil(year: Int, month: Int, day: Int) -> Int {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yoe = y - era * 400
        let mp = (month + 9) % 12
        let doy = (153 * mp + 2) / 5 + day - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        return era * 146_097 + doe - 719_468
    }

    package static func civilFromDays(_ z0: Int) -> (Int, Int, Int) {
        let z = z0 + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let doe = z - era * 146_097
        let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        let d = doy - (153 * mp + 2) / 5 + 1
        let m = mp < 10 ? mp + 3 : mp - 9
        return (yoe + era * 400 + (m <= 2 ? 1 : 0), m, d)
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.singleValueContainer()
        let text = try c.decode(String.self)
        guard let t = Self.parse(text) else {
            throw DecodingError.dataCorruptedError(in: c, debugDescription: "invalid time `\(text)`")
        }
        self = t
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.singleValueContainer()
        try c.encode(description)
    }
}
