/// A length of time in whole seconds, written in policies as `30s`, `15m`, `24h`, `7d`, `2w`
/// (or a sum such as `1d12h`).
///
/// Limits are inclusive: a limit of `7d` holds while the elapsed time is at most exactly
/// 7 days; one second more exceeds it.
public struct TimeSpan: Hashable, Comparable, Sendable, Codable, CustomStringConvertible {
    /// The length in seconds; never negative.
    public var seconds: Int64

    /// Creates a span of `seconds` seconds.
    public init(seconds: Int64) { self.seconds = seconds }

    public static func seconds(_ s: Int64) -> TimeSpan { TimeSpan(seconds: s) }
    public static func minutes(_ m: Int64) -> TimeSpan { TimeSpan(seconds: m * 60) }
    public static func hours(_ h: Int64) -> TimeSpan { TimeSpan(seconds: h * 3600) }
    public static func days(_ d: Int64) -> TimeSpan { TimeSpan(seconds: d * 86_400) }

    /// The largest span accepted: 100 years, which keeps every sum of times far from overflow.
    public static let maximum = TimeSpan(seconds: 100 * 366 * 86_400)

    static let units: [(Character, Int64)] = [("w", 604_800), ("d", 86_400), ("h", 3600), ("m", 60), ("s", 1)]

    /// Why a duration text is not valid.
    public enum ParseError: Error, Equatable, Sendable {
        case empty
        case negative
        case missingUnit
        case unknownUnit(String)
        case malformed
        case tooLarge
    }

    /// Parses `7d`, `24h`, `1d12h`. Rejects signs, spaces, fractions, unknown units and
    /// anything over `maximum`.
    public static func parse(_ text: String) -> Result<TimeSpan, ParseError> {
        if text.isEmpty { return .failure(.empty) }
        if text.hasPrefix("-") { return .failure(.negative) }
        var total: Int64 = 0
        var number: Int64? = nil
        var sawUnit = false
        for ch in text {
            if let digit = ch.wholeNumberValue, ch.isASCII {
                let (m, o1) = (number ?? 0).multipliedReportingOverflow(by: 10)
                let (n, o2) = m.addingReportingOverflow(Int64(digit))
                if o1 || o2 || n > maximum.seconds { return .failure(.tooLarge) }
                number = n
            } else if let unit = units.first(where: { $0.0 == ch }) {
                guard let n = number else { return .failure(.malformed) }
                let (v, o1) = n.multipliedReportingOverflow(by: unit.1)
                let (t, o2) = total.addingReportingOverflow(v)
                if o1 || o2 || t > maximum.seconds { return .failure(.tooLarge) }
                total = t
                number = nil
                sawUnit = true
            } else if ch.isLetter {
                var unit = ""
                var started = false
                for c in text {
                    if c.isLetter { started = true; unit.append(c) } else if started { break }
                }
                return .failure(.unknownUnit(unit))
            } else {
                return .failure(.malformed)
            }
        }
        if number != nil { return .failure(sawUnit ? .malformed : .missingUnit) }
        return .success(TimeSpan(seconds: total))
    }

    /// The shortest exact text for this span: `7d`, `1d12h`, `0s`.
    public var description: String {
        if seconds == 0 { return "0s" }
        var rest = seconds
        var out = ""
        for (unit, size) in Self.units where unit != "w" {
            if rest >= size {
                out += "\(rest / size)\(unit)"
                rest %= size
            }
        }
        return out
    }

    public static func < (lhs: TimeSpan, rhs: TimeSpan) -> Bool { lhs.seconds < rhs.seconds }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.singleValueContainer()
        let text = try c.decode(String.self)
        switch Self.parse(text) {
        case let .success(span): self = span
        case .failure: throw DecodingError.dataCorruptedError(in: c, debugDescription: "invalid duration `\(text)`")
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.singleValueContainer()
        try c.encode(description)
    }
}
