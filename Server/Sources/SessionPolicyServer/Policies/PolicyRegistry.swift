public import Foundation
public import Logging
import NIOConcurrencyHelpers
public import SessionPolicy
import SessionPolicyYAML

/// The policies a server serves, loaded from a directory by name (the policy's `name:`).
///
/// A reload never takes a policy away by accident. Each served policy belongs to the file that
/// defined its name first. A file that no longer compiles, a second file with a name that
/// already serves, a file that is gone or that now defines another name: each is a problem
/// (log, `/healthz`, `/v1/policies`) while the last good version keeps serving. A policy stops
/// serving only on purpose: a file `NAME.removed` in the directory (see ``removalSuffix``), or a
/// restart, which serves what the directory holds. Reads are a lock and a copy.
public final class PolicyRegistry: Sendable {
    /// One served policy.
    public struct Entry: Sendable {
        /// The compiled policy.
        public var policy: CompiledPolicy
        /// The file it came from.
        public var file: String
        /// The digest of its machine document (`sha256:...`): the policy's one name for a
        /// version, which `/v1/policies`, the reload log, the decision log, `policyctl inspect`
        /// and the runtimes all give.
        public var digest: String
        /// When this version was loaded (server clock).
        public var loadedAt: Date
        /// A digest of the file's text, which tells two loads of one file apart (a comment
        /// changes it, not the machine): never shown, the `digest` is.
        var fileDigest: String

        init(policy: CompiledPolicy, file: String, fileDigest: String, loadedAt: Date) {
            self.policy = policy
            self.file = file
            self.fileDigest = fileDigest
            self.loadedAt = loadedAt
            self.digest = policy.portable.digest
        }
    }

    /// A file with a problem now: it does not compile, it names a policy another file already
    /// serves, or it is gone (or names another policy) while the policy it held still serves.
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
        /// The problems, sorted by file (a file may have more than one).
        public var problems: [Problem] = []
        /// The served policies that no file defines now (their file is gone or names another
        /// policy): their last good version serves until they are removed on purpose.
        public var kept: Set<String> = []
        /// The directory's state when it was read (names, sizes, modification times).
        var fingerprint: [String: String] = [:]
        /// When the directory was last read.
        public var loadedAt: Date?

        /// How many files have a problem.
        public var filesWithProblems: Int { Set(problems.map(\.file)).count }
    }

    /// The suffix of a removal marker: a file `NAME.removed` in the directory stops policy
    /// `NAME` from serving at the next reload, whatever the other files hold.
    public static let removalSuffix = ".removed"

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

    /// The served entry of policy `name`.
    public func entry(named name: String) -> Entry? {
        state.withLockedValue { $0.policies[name] }
    }

    /// Whether the directory changed since the last reload (cheap: names, sizes and times).
    public func directoryChanged() -> Bool {
        Self.fingerprint(of: Self.listing(of: directory)) != state.withLockedValue { $0.fingerprint }
    }

    /// Reads the directory again and logs what changed (each policy with its old and new
    /// digest) and every problem. Returns true when there is no problem.
    @discardableResult
    public func reload(logger: Logger) -> Bool {
        reloadLock.withLock {
            let old = snapshot
            let (next, records) = Self.next(after: old, read: DirectoryRead(directory: directory), now: Date())
            state.withLockedValue { $0 = next }
            for record in records {
                logger.log(level: record.level, "\(record.message)", metadata: record.metadata)
            }
            return next.problems.isEmpty
        }
    }
}

// MARK: - Reading the directory

extension PolicyRegistry {
    /// A policy file that compiles.
    struct Compiled {
        var policy: CompiledPolicy
        /// The digest of the file's text (`Entry.fileDigest`).
        var fileDigest: String
        /// The line of its `name:` key (1 when it cannot be told).
        var nameLine: Int
    }

    /// What one reload read.
    struct DirectoryRead {
        var directory: String
        /// The policy files, sorted.
        var files: [String]
        /// What each file compiled to, or why it does not.
        var results: [String: Result<Compiled, DiagnosticError>]
        /// The policies removed on purpose, with their marker files.
        var removed: [String: String]
        var fingerprint: [String: String]

        init(directory: String) {
            let listing = PolicyRegistry.listing(of: directory)
            self.directory = directory
            fingerprint = PolicyRegistry.fingerprint(of: listing)
            files = listing.files
            removed = listing.markers
            results = [:]
            for file in files {
                results[file] = PolicyFile.load(file).map {
                    Compiled(
                        policy: $0.compiled, fileDigest: PolicyRegistry.fileDigest($0.text), nameLine: PolicyRegistry.nameLine(in: $0.text))
                }
            }
        }
    }

    /// The policy files (sorted) and the removal markers (policy name -> marker file) of `directory`.
    static func listing(of directory: String) -> (files: [String], markers: [String: String]) {
        let files = SourceFile.expand(directory).filter { $0 != directory }
        var markers: [String: String] = [:]
        for name in (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
        where name.hasSuffix(removalSuffix) && name.count > removalSuffix.count {
            let policy = String(name.dropLast(removalSuffix.count))
            markers[policy] = marker(directory, policy)
        }
        return (files, markers)
    }

    static func fingerprint(of listing: (files: [String], markers: [String: String])) -> [String: String] {
        var out: [String: String] = [:]
        for file in listing.files + listing.markers.values {
            let attributes = try? FileManager.default.attributesOfItem(atPath: file)
            let size = (attributes?[.size] as? NSNumber)?.intValue ?? -1
            let modified = (attributes?[.modificationDate] as? Date)?.timeIntervalSince1970 ?? 0
            out[file] = "\(size)@\(modified)"
        }
        return out
    }

    /// FNV-1a over the text: enough to tell versions of one file apart.
    static func fileDigest(_ text: String) -> String {
        var h: UInt64 = 0xcbf2_9ce4_8422_2325
        for b in text.utf8 {
            h ^= UInt64(b)
            h = h &* 0x100_0000_01b3
        }
        return String(h, radix: 16)
    }

    /// The line of a YAML file's top-level `name:` key; 1 when there is none (JSON, say).
    static func nameLine(in text: String) -> Int {
        var line = 1
        for l in text.split(separator: "\n", omittingEmptySubsequences: false) {
            if l.hasPrefix("name:") || l.hasPrefix("name :") { return line }
            line += 1
        }
        return 1
    }
}

// MARK: - The next snapshot

extension PolicyRegistry {
    /// One log record of a reload.
    struct LogRecord {
        var level: Logger.Level
        var message: String
        var metadata: Logger.Metadata
    }

    /// What serves after a reload that read `read`, when `old` served, and what to log. No I/O.
    static func next(after old: Snapshot, read: DirectoryRead, now: Date) -> (Snapshot, [LogRecord]) {
        var reload = Reload(old: old, read: read, now: now)
        reload.reportEmptyDirectory()
        reload.assignNames()
        reload.keepLastGoodOfBroken()
        reload.keepVanished()
        reload.next.problems.sort { ($0.file, $0.stillServing ?? "") < ($1.file, $1.stillServing ?? "") }
        reload.logChanges()
        return (reload.next, reload.log)
    }

    /// One reload worked out in steps: the files read, sorted into those that compile (by the
    /// name they claim) and those that do not, then the snapshot that serves next and the log.
    struct Reload {
        let old: Snapshot
        let read: DirectoryRead
        let now: Date
        var next = Snapshot()
        var log: [LogRecord] = []
        /// The files that compile, by the name they define (in file order).
        var claims: [String: [String]] = [:]
        var compiled: [String: Compiled] = [:]
        /// The files that do not compile, with their diagnostics.
        var broken: [String: [Diagnostic]] = [:]

        init(old: Snapshot, read: DirectoryRead, now: Date) {
            (self.old, self.read, self.now) = (old, read, now)
            next.fingerprint = read.fingerprint
            next.loadedAt = now
            for file in read.files {
                switch read.results[file] {
                case let .success(c)?:
                    claims[c.policy.name, default: []].append(file)
                    compiled[file] = c
                case let .failure(error)?:
                    broken[file] = error.diagnostics
                case nil:
                    continue
                }
            }
        }

        var directory: String { read.directory }

        var removeHelp: (String) -> String {
            let directory = read.directory
            return { name in
                "put back a file that defines `\(name)` to serve it from a file again; to stop serving it, create "
                    + "`\(PolicyRegistry.marker(directory, name))` (or restart the server)"
            }
        }

        /// An empty directory is a problem: nothing new serves from it.
        mutating func reportEmptyDirectory() {
            if read.files.isEmpty {
                next.problems.append(
                    Problem(
                        file: directory,
                        diagnostics: [
                            .error(
                                .fileNotFound, "no policy files in `\(directory)`", at: nil,
                                help: "give the directory that holds the `.yaml` policy files with `--policies`")
                        ], stillServing: nil))
                log.append(.init(level: .error, message: "no policy files in the directory", metadata: ["directory": "\(directory)"]))
            }
        }
        /// Each name serves from the file that had it first; the other files that define it are problems.
        mutating func assignNames() {
            for name in claims.keys.sorted() {
                let files = claims[name]!
                if let marker = read.removed[name] {
                    for file in files {
                        let d = Diagnostic.warning(
                            .duplicatePolicyName, "policy `\(name)` is removed on purpose by `\(marker)`: this file does not serve",
                            at: SourceLocation(file: file, line: compiled[file]!.nameLine, column: 1),
                            help: "delete `\(marker)` to serve this file as `\(name)`")
                        next.problems.append(Problem(file: file, diagnostics: [d], stillServing: nil))
                        log.append(
                            .init(
                                level: .warning, message: "policy file not served: its policy is removed on purpose",
                                metadata: ["file": "\(file)", "policy": "\(name)", "marker": "\(marker)"]))
                    }
                    continue
                }
                let incumbent = old.policies[name]
                let owner: String?
                if let incumbent, files.contains(incumbent.file) {
                    owner = incumbent.file
                } else if let incumbent, !old.kept.contains(name), broken[incumbent.file] != nil {
                    owner = nil  // its file does not compile now: its last good version keeps the name
                } else {
                    owner = files.first
                }
                if let owner {
                    let c = compiled[owner]!
                    next.policies[name] =
                        incumbent.map { $0.file == owner && $0.fileDigest == c.fileDigest } == true
                        ? incumbent! : Entry(policy: c.policy, file: owner, fileDigest: c.fileDigest, loadedAt: now)
                } else {
                    next.policies[name] = incumbent
                }
                let serving = next.policies[name]!.file
                for file in files where file != owner {
                    let d = Diagnostic.error(
                        .duplicatePolicyName, "policy `\(name)` already serves from `\(serving)`: this file does not serve",
                        at: SourceLocation(file: file, line: compiled[file]!.nameLine, column: 1),
                        help: "give every policy in the directory its own `name`; to serve `\(name)` from this file instead, "
                            + "delete `\(serving)` or change its `name`")
                    next.problems.append(Problem(file: file, diagnostics: [d], stillServing: nil))
                    log.append(
                        .init(
                            level: .error, message: "policy file not served: its name already serves from another file",
                            metadata: ["file": "\(file)", "policy": "\(name)", "serving_file": "\(serving)"]))
                }
            }
        }
        /// A file that does not compile: the version it last served keeps serving.
        mutating func keepLastGoodOfBroken() {
            for file in read.files {
                guard let diagnostics = broken[file] else { continue }
                var stillServing: String?
                if let lastGood = old.policies.values.first(where: { $0.file == file && !old.kept.contains($0.policy.name) }),
                    read.removed[lastGood.policy.name] == nil
                {
                    let name = lastGood.policy.name
                    if next.policies[name] == nil { next.policies[name] = lastGood }
                    if next.policies[name]?.file == file { stillServing = name }
                }
                next.problems.append(Problem(file: file, diagnostics: diagnostics, stillServing: stillServing))
                log.append(
                    .init(
                        level: .error, message: "policy file does not compile",
                        metadata: [
                            "file": "\(file)", "still_serving": "\(stillServing ?? "nothing")",
                            "diagnostics": "\(diagnostics.map { "\($0.location.map { "\($0): " } ?? "")\($0.message)" })",
                        ]))
            }
        }
        /// A policy that served and that no file defines now keeps serving, unless removed on purpose.
        mutating func keepVanished() {
            for (name, entry) in old.policies.sorted(by: { $0.key < $1.key }) where next.policies[name] == nil {
                if let marker = read.removed[name] {
                    log.append(
                        .init(
                            level: .notice, message: "policy removed on purpose",
                            metadata: ["policy": "\(name)", "file": "\(entry.file)", "digest": "\(entry.digest)", "marker": "\(marker)"]))
                    continue
                }
                next.policies[name] = entry
                next.kept.insert(name)
                let d: Diagnostic
                if !read.files.contains(entry.file) {
                    d = .warning(
                        .fileNotFound, "`\(entry.file)` is gone; the last good version of policy `\(name)` still serves", at: nil,
                        help: removeHelp(name))
                    log.append(
                        .init(
                            level: .warning, message: "policy file is gone; its last good version still serves",
                            metadata: ["policy": "\(name)", "file": "\(entry.file)", "digest": "\(entry.digest)"]))
                } else {
                    let now =
                        compiled[entry.file].map { "`\(entry.file)` defines `\($0.policy.name)` now" } ?? "`\(entry.file)` does not compile"
                    d = .warning(
                        .unknownPolicy, "no file defines policy `\(name)` any more (\(now)); its last good version still serves",
                        at: SourceLocation(file: entry.file, line: compiled[entry.file]?.nameLine ?? 1, column: 1), help: removeHelp(name))
                    log.append(
                        .init(
                            level: .warning, message: "policy no longer defined by its file; its last good version still serves",
                            metadata: [
                                "policy": "\(name)", "file": "\(entry.file)", "digest": "\(entry.digest)",
                                "file_defines": "\(compiled[entry.file]?.policy.name ?? "nothing")",
                            ]))
                }
                next.problems.append(Problem(file: entry.file, diagnostics: [d], stillServing: name))
            }
        }
        /// What changed, with digests.
        mutating func logChanges() {
            var changed = 0
            for name in Set(old.policies.keys).union(next.policies.keys).sorted() {
                switch (old.policies[name], next.policies[name]) {
                case let (nil, after?):
                    changed += 1
                    log.append(
                        .init(
                            level: .info, message: "policy added",
                            metadata: ["policy": "\(name)", "file": "\(after.file)", "digest": "\(after.digest)"]))
                case (_?, nil):
                    changed += 1  // logged above: removed on purpose
                case let (before?, after?) where before.file != after.file || before.fileDigest != after.fileDigest:
                    changed += 1
                    var metadata: Logger.Metadata = [
                        "policy": "\(name)", "file": "\(after.file)", "old_digest": "\(before.digest)", "new_digest": "\(after.digest)",
                    ]
                    if before.file != after.file { metadata["old_file"] = "\(before.file)" }
                    log.append(.init(level: .info, message: "policy changed", metadata: metadata))
                case let (_?, after?) where old.kept.contains(name) && !next.kept.contains(name):
                    log.append(
                        .init(
                            level: .info, message: "policy file is back",
                            metadata: ["policy": "\(name)", "file": "\(after.file)", "digest": "\(after.digest)"]))
                default:
                    break
                }
            }
            if changed > 0 || old.loadedAt == nil {
                log.append(
                    .init(
                        level: .info, message: "policies loaded",
                        metadata: ["directory": "\(directory)", "policies": "\(next.policies.keys.sorted().joined(separator: ","))"]))
            }
        }
    }

    /// The removal marker of policy `name` in `directory`.
    static func marker(_ directory: String, _ name: String) -> String {
        (directory.hasSuffix("/") ? directory : directory + "/") + name + removalSuffix
    }
}
