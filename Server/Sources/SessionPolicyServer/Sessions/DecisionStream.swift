import Crypto
import Foundation
import NIOConcurrencyHelpers
import SessionPolicy
import SessionPolicyDelivery

/// Writes every stateful decision as one JSON line to standard output or a file
/// (`--decision-log`), in the shape Open Policy Agent's decision logs have: `decision_id`,
/// `timestamp`, `path`, `input`, `result`, `bundles` (the policy and its machine digest) and
/// `labels`. With `hashUsers`, the user id is its SHA-256 (hex) in `input.user`.
final class DecisionStream: Sendable {
    private let handle: FileHandle
    private let lock = NIOLock()
    let hashUsers: Bool

    /// Opens `target`: `stdout`, or a file appended to (created if needed).
    init(_ target: String, hashUsers: Bool) throws {
        self.hashUsers = hashUsers
        if target == "stdout" {
            handle = FileHandle.standardOutput
        } else {
            if !FileManager.default.fileExists(atPath: target) {
                guard FileManager.default.createFile(atPath: target, contents: nil) else {
                    throw ConfigurationError(
                        "cannot create the decision log file `\(target)`", help: "check the folder and its permissions")
                }
            }
            guard let h = FileHandle(forWritingAtPath: target) else {
                throw ConfigurationError("cannot write the decision log file `\(target)`", help: "check its permissions")
            }
            h.seekToEndOfFile()
            handle = h
        }
    }

    /// One line for `record`, with the event as the server read it.
    func write(_ record: DecisionRecord, event: Event) {
        let user = hashUsers ? SHA256.hash(data: Data(record.user.utf8)).map { String(format: "%02x", $0) }.joined() : record.user
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
            + #""timestamp":\#(quoted("\(record.serverTime)"))}"# + "\n"
        lock.withLock { handle.write(Data(line.utf8)) }
    }
}
