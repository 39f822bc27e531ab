public import Foundation
public import Logging
import NIOConcurrencyHelpers
public import SessionPolicy
import SessionPolicyYAML

/// The policies a server serves, loaded from a directory by name (the policy's `name:`).
/// A reload compiles every file; a file that no longer compiles is reported (log, `/healthz`,
/// `/v1/policies`) while its last good version keeps serving. Reads are a lock and a copy.
public final class PolicyRegistry: Sendable {
    /// One served policy.
    public struct Entry: Sendable {
        /// The compiled policy.
        public var policy: CompiledPolicy
        /// The file it came from.
        public var file: String
        /// A digest of the file's text (changes when the file does).
        public var digest: String
        /// When this version was loaded (server clock).
        public var loadedAt: Date
    }

    /// A file that does not compile now.
    public struct Problem: Sendable {
        /// The file.
        public var file: String
        /// What is wrong, located.
        public var diagnostics: [Diagnostic]
        /// The name of the policy still serving from an earlier good version of this file, if any.
        public var stillServing: String?
    }

    /// What serves now.
    public struct Snapshot: Sendable {
        /// Served policies by name.
        public var policies: [String: Entry] = [:]
        /// Files that do not compile, by path.
        public var problems: [String: Problem] = [:]
        /// The directory's state when it was read (names, sizes, modification times).
        var fingerprint: [String: String] = [:]
        /// When the directory was last read.
        public var loadedAt: Date?
    }

    /// The directory the policies come from.
    public let directory: String
    private let state = NIOLockedValueBox(Snapshot())
    private let reloadLock = NIOLock()

    /// Creates an empty registry for `directory`; call ``reload(logger:)`` to load it.
    public init(directory: String) {
        self.directory = directory
    }

    /// What serves now.
    public var snapshot: Snapshot { state.withLockedValue { $0 } }

    /// The policy named `name`, if one serves.
    public func policy(named name: String) -> CompiledPolicy? {
        state.withLockedValue { $0.policies[name]?.policy }
    }

    /// Whether the directory changed since the last reload (cheap: names, sizes and times).
    public func directoryChanged() -> Bool {
        Self.fingerprint(of: directory) != state.withLockedValue { $0.fingerprint }
    }

    /// Reads the directory again. Returns true when every file compiled.
    @discardableResult
    public func reload(logger: Logger) -> Bool {
        reloadLock.withLock {
            let old = snapshot
            var next = Snapshot()
            next.fingerprint = Self.fingerprint(of: directory)
            next.loadedAt = Date()
            let files = SourceFile.expand(directory).filter { $0 != directory }
            if files.isEmpty {
                next.problems[directory] = Problem(
                    file: directory,
                    diagnostics: [
                        .error(
                            .fileNotFound, "no policy files in `\(directory)`", at: nil,
                            help: "give the directory that holds the `.yaml` policy files with `--policies`")
                    ], stillServing: nil)
            }
            for file in files {
                switch PolicyFile.load(file) {
                case let .success(loaded):
                    let name = loaded.compiled.name
                    if let other = next.policies[name] {
                        let d = Diagnostic.error(
                            .duplicatePolicyName, "policy `\(name)` is also defined in `\(other.file)`",
                            at: SourceLocation(file: file, line: 1, column: 1), help: "give every policy in the directory its own `name`")
                        next.problems[file] = Problem(file: file, diagnostics: [d], stillServing: nil)
                        continue
                    }
                    let digest = Self.digest(loaded.text)
                    let previous = old.policies[name]
                    next.policies[name] =
                        previous?.digest == digest && previous?.file == file
                        ? previous! : Entry(policy: loaded.compiled, file: file, digest: digest, loadedAt: Date())
                case let .failure(error):
                    // Keep serving the last good version that came from this file.
                    let lastGood = old.policies.values.first { $0.file == file }
                    if let lastGood, next.policies[lastGood.policy.name] == nil {
                        next.policies[lastGood.policy.name] = lastGood
                    }
                    next.problems[file] = Problem(file: file, diagnostics: error.diagnostics, stillServing: lastGood?.policy.name)
                }
            }
            state.withLockedValue { $0 = next }
            for problem in next.problems.values.sorted(by: { $0.file < $1.file }) {
                logger.error(
                    "policy file does not compile",
                    metadata: [
                        "file": "\(problem.file)", "still_serving": "\(problem.stillServing ?? "nothing")",
                        "diagnostics": "\(problem.diagnostics.map { "\($0.location.map { "\($0): " } ?? "")\($0.message)" })",
                    ])
            }
            let changed =
                Set(next.policies.keys).symmetricDifference(old.policies.keys).count
                + next.policies.filter { old.policies[$0.key]?.digest != $0.value.digest }.count
            if changed > 0 || old.loadedAt == nil {
                logger.info(
                    "policies loaded",
                    metadata: ["directory": "\(directory)", "policies": "\(next.policies.keys.sorted().joined(separator: ","))"])
            }
            return next.problems.isEmpty
        }
    }

    static func fingerprint(of directory: String) -> [String: String] {
        var out: [String: String] = [:]
        for file in SourceFile.expand(directory) {
            let attributes = try? FileManager.default.attributesOfItem(atPath: file)
            let size = (attributes?[.size] as? NSNumber)?.intValue ?? -1
            let modified = (attributes?[.modificationDate] as? Date)?.timeIntervalSince1970 ?? 0
            out[file] = "\(size)@\(modified)"
        }
        return out
    }

    /// FNV-1a over the text: enough to tell versions of one file apart.
    static func digest(_ text: String) -> String {
        var h: UInt64 = 0xcbf2_9ce4_8422_2325
        for b in text.utf8 {
            h ^= UInt64(b)
            h = h &* 0x100_0000_01b3
        }
        return String(h, radix: 16)
    }
}
