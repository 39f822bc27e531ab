import Foundation
import SessionPolicy
import Testing

@Suite("Durations and times")
struct TimeTests {
    @Test(
        "valid durations",
        arguments: [
            ("30s", 30), ("15m", 900), ("24h", 86_400), ("7d", 604_800), ("2w", 1_209_600), ("1d12h", 129_600), ("0s", 0),
        ] as [(String, Int64)])
    func validDurations(text: String, seconds: Int64) throws {
        #expect(try TimeSpan.parse(text).get() == TimeSpan(seconds: seconds))
    }

    @Test(
        "invalid durations",
        arguments: [
            ("7 days", TimeSpan.ParseError.malformed), ("-1d", .negative), ("7x", .unknownUnit("x")), ("7", .missingUnit),
            ("", .empty), ("99999999999999999999d", .tooLarge), ("36601d", .tooLarge), ("1.5d", .malformed), ("d", .malformed),
            ("7days", .unknownUnit("days")),
        ])
    func invalidDurations(text: String, error: TimeSpan.ParseError) {
        #expect(throws: error) { try TimeSpan.parse(text).get() }
    }

    @Test("durations print in their shortest exact form")
    func durationText() {
        #expect(TimeSpan.days(90).description == "90d")
        #expect(TimeSpan(seconds: 90 * 86_400 + 1).description == "90d1s")
        #expect(TimeSpan.hours(36).description == "1d12h")
    }

    @Test(
        "RFC 3339 times",
        arguments: [
            ("1970-01-01T00:00:00Z", 0), ("2026-03-01T09:30:00Z", 1_772_357_400), ("2026-03-01T11:30:00+02:00", 1_772_357_400),
            ("2024-02-29T00:00:00Z", 1_709_164_800), ("2026-03-01T09:30:00.250Z", 1_772_357_400), ("2026-03-01", 1_772_323_200),
        ] as [(String, Int64)])
    func times(text: String, seconds: Int64) {
        #expect(Timestamp.parse(text)?.secondsSinceEpoch == seconds)
    }

    @Test(
        "invalid times",
        arguments: [
            "2026-02-30T00:00:00Z", "2026-13-01T00:00:00Z", "2026-03-01T24:00:00Z", "yesterday",
            "2026-03-01T09:30:00", "2026-03-01T09:30Z", "+3d", "2025-02-29",
        ])
    func invalidTimes(text: String) {
        #expect(Timestamp.parse(text) == nil)
    }

    @Test("times print as UTC and parse back")
    func roundTrip() {
        for seconds: Int64 in [0, 1_772_357_400, -86_401, 4_102_444_800] {
            let t = Timestamp(secondsSinceEpoch: seconds)
            #expect(Timestamp.parse(t.description) == t)
        }
    }
}

@Suite("Timestamp and Date")
struct TimestampDateTests {
    @Test("a timestamp goes to a Date and back without losing a millisecond, across the whole range")
    func roundTrip() {
        var checked = 0
        var ms = Timestamp.earliest.millisecondsSinceEpoch
        let step: Int64 = 7_919_999_987  // a prime-ish stride, so every millisecond digit is hit
        while ms <= Timestamp.latest.millisecondsSinceEpoch {
            for t in [ms, ms + 1, ms + 999] where t <= Timestamp.latest.millisecondsSinceEpoch {
                let timestamp = Timestamp(millisecondsSinceEpoch: t)
                #expect(Timestamp(Date(timestamp)) == timestamp, "\(timestamp)")
                checked += 1
            }
            ms += step
        }
        #expect(checked > 100_000)
        #expect(Timestamp(Date(timeIntervalSince1970: 1_772_355_600.25)).description == "2026-03-01T09:00:00.250Z")
    }
}
