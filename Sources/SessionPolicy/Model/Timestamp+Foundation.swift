public import Foundation

extension Timestamp {
    /// The time of `date`, to the nearest millisecond: `Timestamp(Date())` is how an app dates an
    /// event. (The evaluator itself never reads a clock.)
    public init(_ date: Date) {
        self.init(millisecondsSinceEpoch: Int64((date.timeIntervalSince1970 * 1000).rounded()))
    }
}

extension Date {
    /// The time of `timestamp`; `Timestamp(Date(t)) == t` for every timestamp in range.
    public init(_ timestamp: Timestamp) {
        self.init(timeIntervalSince1970: Double(timestamp.millisecondsSinceEpoch) / 1000)
    }
}
