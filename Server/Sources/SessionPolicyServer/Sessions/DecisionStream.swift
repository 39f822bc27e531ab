import Crypto
import Foundation
import Logging
import NIOConcurrencyHelpers
import SessionPolicy
import SessionPolicyDelivery

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Writes every stateful decision as one JSON line to standard output or a file
/// (`--decision-log`), in the shape Open Policy Agent's decision logs have: `decision_id`,
/// `timestamp`, `path`, `input`, `result`, `bundles` (the policy and its machine digest) and
/// `labels`. With `hashUsers`, the user id is its SHA-256 (hex) in `input.user`.
final class DecisionStream: Sendable {
    /// `stdout`, or the file's path.
    let target: String
    /// The open descriptor: standard output's, or the file's opened for appending; replaced by
    /// `reopen()`.
    private let descriptor: NIOLockedValueBox<Int32>
    let hashUsers: Bool

    /// Opens `target`: `stdout`, or a file opened for appending (`O_APPEND`, created with mode
    /// 0640 if needed), so every line goes to the end of the file even after another program
    /// truncated it (logrotate's `copytruncate`).
    init(_ target: String, hashUsers: Bool) throws {
        self.target = target
        self.hashUsers = hashUsers
        descriptor = NIOLockedValueBox(target == "stdout" ? STDOUT_FILENO : try Self.open(target))
    }

    deinit {
        let fd = descriptor.withLockedValue { $0 }
        if fd != STDOUT_FILENO { close(fd) }
    }

    static func open(_ path: String) throws -> Int32 {
        let fd = path.withCString { sessionPolicyOpen($0, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0o640) }
        guard fd >= 0 else {
            let cause = String(cString: strerror(errno))
            throw ConfigurationError(
                "cannot open the decision log file `\(path)` for appending: \(cause)", help: "check the folder and its permissions")
        }
        return fd
    }

    /// Opens the file again by its path (on SIGHUP): after a log rotation moved the file away
    /// (logrotate's `create`), the next lines go to a new file at the path. Standard output is
    /// kept. When the path cannot be opened, the lines keep going to the old file and the error
    /// is logged.
    func reopen(logger: Logger) {
        guard target != "stdout" else { return }
        do {
            let fresh = try Self.open(target)
            let old = descriptor.withLockedValue { fd in
                defer { fd = fresh }
                return fd
            }
            close(old)
            logger.info("decision log reopened", metadata: ["file": "\(target)"])
        } catch {
            logger.error(
                "the decision log could not be reopened; lines still go to the file it had open",
                metadata: ["file": "\(target)", "error": "\(error)"])
        }
    }

    /// Writes `bytes` whole (a short write or an interruption continues where it stopped). A
    /// failed write is dropped: the decision is already stored, and the stream is a copy.
    private static func writeAll(_ fd: Int32, _ bytes: [UInt8]) {
        var offset = 0
        while offset < bytes.count {
            let n = bytes.withUnsafeBytes { sessionPolicyWrite(fd, $0.baseAddress! + offset, bytes.count - offset) }
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else { return }
            offset += n
        }
    }

    /// A user id as the stream writes it with `hashUsers`: its SHA-256, in hex.
    static func hash(_ user: String) -> String {
        SHA256.hash(data: Data(user.utf8)).map { String(format: "%02x", $0) }.joined()
    }

    /// `actor` with a user's id hashed (a service's client id is not personal: kept).
    static func hashed(_ actor: DecisionActor) -> DecisionActor {
        actor.kind == "user" ? DecisionActor(kind: "user", id: hash(actor.id)) : actor
    }

    /// One line for `record`, with the event as the server read it: `requested_by` is who asked
    /// (`user:ID` or `service:CLIENT`, the user hashed with `hashUsers`) and `req_id` the
    /// request's id, as Open Policy Agent names them; both only when the record knows them.
    func write(_ record: DecisionRecord, event: Event) {
        let user = hashUsers ? Self.hash(record.user) : record.user
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        var anonymous = event
        if hashUsers { anonymous.user = user }
        let eventJSON = (try? encoder.encode(anonymous)).map { String(decoding: $0, as: UTF8.self) } ?? "null"
        func quoted(_ s: String?) -> String { s.map(SessionExport.quoted) ?? "null" }
        let line =
            #"{"bundles":{\#(quoted(record.policy)):{"revision":\#(quoted(record.digest))}},"decision_id":\#(quoted(UUID().uuidString.lowercased())),"#
            + #""input":{"device":\#(quoted(record.device)),"event":\#(eventJSON),"user":\#(quoted(user))},"#
            + #""labels":{"app":"sessionpolicy"},"path":\#(quoted("sessionpolicy/" + record.policy)),"#
            + #""result":{"decision":\#(quoted(record.decision)),"notices":[\#(record.notices.map { quoted($0) }.joined(separator: ","))],"#
            + #""reason":\#(quoted(record.reason)),"revision":\#(record.revision),"state":\#(quoted(record.state)),"transition":\#(record.transition)},"#
            + (record.requestID.map { #""req_id":\#(quoted($0)),"# } ?? "")
            + (record.actor.map { #""requested_by":\#(quoted((hashUsers ? Self.hashed($0) : $0).text)),"# } ?? "")
            + #""timestamp":\#(quoted("\(record.serverTime)"))}"# + "\n"
        let bytes = Array(line.utf8)
        descriptor.withLockedValue { Self.writeAll($0, bytes) }
    }
}

/// The C library's `open` and `write`, named apart from the methods above.
private func sessionPolicyOpen(_ path: UnsafePointer<CChar>, _ flags: Int32, _ mode: mode_t) -> Int32 { open(path, flags, mode) }
private func sessionPolicyWrite(_ fd: Int32, _ buffer: UnsafeRawPointer, _ count: Int) -> Int { write(fd, buffer, count) }
