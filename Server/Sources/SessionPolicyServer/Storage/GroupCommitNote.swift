import NIOConcurrencyHelpers

/// Where a store notes, for the request's trace, the size of the group commit a session write
/// joined. The server sets one around a traced store operation; a store takes it from the
/// writing task when the write is queued and fills it in when the group commits.
final class GroupCommitNote: Sendable {
    /// The note of the store operation this task traces; nil when none is traced.
    @TaskLocal static var current: GroupCommitNote?

    private let size = NIOLockedValueBox(0)

    /// The write was committed in a group of `size` writes.
    func joined(_ size: Int) { self.size.withLockedValue { $0 = size } }

    /// The size of the group the write was committed in; 0 when it has not been.
    var groupSize: Int { size.withLockedValue { $0 } }
}
