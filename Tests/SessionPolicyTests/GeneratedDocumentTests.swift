import Foundation
import SessionPolicyTestSupport
import Testing

@testable import SessionPolicy

/// The generated machine documents (spec/conformance/generated-documents.jsonl, written by
/// `generate-documents.mjs`): each a shipped machine with JSON Patch operations applied, which
/// every runtime must refuse with the Swift reader's code or accept with its digest. This test
/// writes the results (`RECORD_SNAPSHOTS=1`) and otherwise checks that the committed ones are the
/// Swift reader's.
@Suite("Generated machine documents")
struct GeneratedDocumentTests {
    static let record = ProcessInfo.processInfo.environment["RECORD_SNAPSHOTS"] != nil
    static func path(_ relative: String) -> String { Fixtures.path("spec/conformance/\(relative)") }

    struct PatchError: Error, CustomStringConvertible {
        var description: String
    }

    /// A JSON text as a canonical value (integers only, as the generated documents are).
    static func value(_ text: String) throws -> CanonicalJSON {
        guard case let .success(node?) = JSONSyntax.parse(Data(text.utf8), file: "generated.json") else {
            throw PatchError(description: "not JSON: \(text.prefix(80))")
        }
        return try MachineDocument.Reader(file: "generated.json").canonical(node)
    }

    /// The tokens of an RFC 6901 pointer.
    static func tokens(_ pointer: String) -> [String] {
        pointer.isEmpty
            ? []
            : pointer.dropFirst().split(separator: "/", omittingEmptySubsequences: false).map {
                $0.replacingOccurrences(of: "~1", with: "/").replacingOccurrences(of: "~0", with: "~")
            }
    }

    static func get(_ v: CanonicalJSON, _ path: ArraySlice<String>) throws -> CanonicalJSON {
        guard let first = path.first else { return v }
        switch v {
        case let .array(items):
            guard let i = Int(first), items.indices.contains(i) else { throw PatchError(description: "no item \(first)") }
            return try get(items[i], path.dropFirst())
        case let .object(members):
            guard let m = members[first] else { throw PatchError(description: "no member \(first)") }
            return try get(m, path.dropFirst())
        default: throw PatchError(description: "no value at \(first)")
        }
    }

    /// Applies `op` (`add`, `remove`, `replace`) with `value` at `path` (not empty) in `v`.
    static func change(_ v: inout CanonicalJSON, _ path: ArraySlice<String>, _ op: String, _ value: CanonicalJSON?) throws {
        let key = path.first!
        let last = path.count == 1
        switch v {
        case var .array(items):
            let i = key == "-" ? items.count : Int(key) ?? -1
            guard i >= 0, i <= items.count else { throw PatchError(description: "no item \(key)") }
            if last {
                switch op {
                case "remove": items.remove(at: i)
                case "replace": items[i] = value!
                default: items.insert(value!, at: i)
                }
            } else {
                guard i < items.count else { throw PatchError(description: "no item \(key)") }
                try change(&items[i], path.dropFirst(), op, value)
            }
            v = .array(items)
        case var .object(members):
            if last {
                members[key] = op == "remove" ? nil : value
            } else {
                guard var child = members[key] else { throw PatchError(description: "no member \(key)") }
                try change(&child, path.dropFirst(), op, value)
                members[key] = child
            }
            v = .object(members)
        default: throw PatchError(description: "no value at \(key)")
        }
    }

    /// The document text of a generated line (its members `machine`, `ops`, `digest`).
    static func document(_ line: [String: CanonicalJSON], bases: inout [String: CanonicalJSON]) throws -> String {
        guard case let .string(machine)? = line["machine"], case let .array(ops)? = line["ops"], case let .string(digest)? = line["digest"]
        else { throw PatchError(description: "a line without `machine`, `ops` or `digest`") }
        if bases[machine] == nil {
            bases[machine] = try value(try String(contentsOfFile: path("machines/\(machine).json"), encoding: .utf8))
        }
        var doc = bases[machine]!
        for case let .object(op) in ops {
            guard case let .string(name)? = op["op"], case let .string(pointer)? = op["path"] else {
                throw PatchError(description: "bad op")
            }
            var v = op["value"]
            if name == "copy", case let .string(from)? = op["from"] { v = try get(doc, tokens(from)[...]) }
            let path = tokens(pointer)
            if path.isEmpty { doc = v ?? .null } else { try change(&doc, path[...], name == "copy" ? "add" : name, v) }
        }
        if digest == "fix", case var .object(members) = doc, members["digest"] != nil {
            members["digest"] = .string(MachineDocument.digest(of: .object(members)))
            doc = .object(members)
        }
        return doc.text
    }

    /// A committed line without its result: the generator's part.
    static func withoutResult(_ line: Substring) -> String {
        for marker in [#","refuse":""#, #","accept":""#] {
            if let r = line.range(of: marker, options: .backwards) { return String(line[..<r.lowerBound]) + "}" }
        }
        return String(line)
    }

    /// The result of a line, as the committed line ends: `,"refuse":"CODE"}` or `,"accept":"DIGEST"}`.
    static func result(_ line: [String: CanonicalJSON], bases: [String: CanonicalJSON]) -> String {
        var bases = bases
        do {
            let machine = try PolicyMachine(document: Data(try document(line, bases: &bases).utf8), file: "machine.json")
            return #","accept":"\#(machine.digest)"}"#
        } catch let error as DiagnosticError {
            return #","refuse":"\#(error.diagnostics.first?.code.rawValue ?? "none")"}"#
        } catch {
            return #","error":"\#(error)"}"#
        }
    }

    /// The results, computed on every core.
    final class Results: @unchecked Sendable {
        let lock = NSLock()
        var values: [String]
        init(count: Int) { values = Array(repeating: "", count: count) }
    }

    @Test("each generated document is refused or accepted as the committed result says, by the Swift reader")
    func generated() throws {
        let text = try String(contentsOfFile: Self.path("generated-documents.jsonl"), encoding: .utf8)
        let committed = text.split(separator: "\n")
        var lines: [[String: CanonicalJSON]] = []
        var bases: [String: CanonicalJSON] = [:]
        for line in committed {
            guard case let .object(members) = try Self.value(String(line)), case let .string(machine)? = members["machine"] else {
                throw PatchError(description: "a line that is not an object with a `machine`: \(line.prefix(80))")
            }
            if bases[machine] == nil {
                bases[machine] = try Self.value(try String(contentsOfFile: Self.path("machines/\(machine).json"), encoding: .utf8))
            }
            lines.append(members)
        }
        let results = Results(count: lines.count)
        let (all, shared) = (lines, bases)
        DispatchQueue.concurrentPerform(iterations: all.count) { i in
            let r = Self.result(all[i], bases: shared)
            results.lock.lock()
            results.values[i] = r
            results.lock.unlock()
        }
        var recorded: [String] = []
        var stale: [String] = []
        for (i, line) in committed.enumerated() {
            let now = String(Self.withoutResult(line).dropLast()) + results.values[i]
            if now != line { stale.append(now) }
            recorded.append(now)
        }
        if Self.record {
            try (recorded.joined(separator: "\n") + "\n").write(
                toFile: Self.path("generated-documents.jsonl"), atomically: true, encoding: .utf8)
            return
        }
        #expect(recorded.count >= 500, "generated-documents.jsonl holds only \(recorded.count) documents")
        #expect(
            stale.isEmpty,
            "\(stale.count) stale results, the first: \(stale.first ?? ""); RECORD_SNAPSHOTS=1 swift test --disable-xctest --filter GeneratedDocumentTests"
        )
    }
}
