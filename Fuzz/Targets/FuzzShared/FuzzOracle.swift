import Foundation
public import SessionPolicy
import SessionPolicyYAML

#if canImport(Glibc)
    import Glibc
#endif

/// What the fuzz targets share: the shipped policies, compiled once, and the checks that turn a
/// broken promise into a crash libFuzzer keeps.
public enum FuzzOracle {
    /// The repository's root (this file is `Fuzz/Targets/FuzzShared/FuzzOracle.swift`).
    public static let root: String = {
        if let root = ProcessInfo.processInfo.environment["SESSIONPOLICY_ROOT"] { return root }
        var url = URL(fileURLWithPath: #filePath)
        for _ in 0..<4 { url.deleteLastPathComponent() }
        return url.path
    }()

    /// The shipped policies, compiled, by name.
    public static let shipped: [String: PolicyFile.Loaded] = {
        var out: [String: PolicyFile.Loaded] = [:]
        for path in SourceFile.expand(root + "/policies") {
            guard case let .success(loaded) = PolicyFile.load(path) else { fail("a shipped policy does not load: \(path)") }
            out[loaded.compiled.name] = loaded
        }
        if out.isEmpty { fail("no shipped policies under \(root)/policies (set SESSIONPOLICY_ROOT)") }
        return out
    }()

    /// The shipped policies' machines, in name order.
    public static let machines: [CompiledPolicy] = shipped.keys.sorted().map { shipped[$0]!.compiled }

    /// Reports `message` and aborts: libFuzzer saves the input as a crash.
    public static func fail(_ message: String) -> Never {
        FileHandle.standardError.write(Data("fuzz oracle: \(message)\n".utf8))
        abort()
    }

    /// Every refusal is located and explained: at least one error, each diagnostic with a place
    /// in `file` (any file when nil: a scenario file may name a policy file) with line and
    /// column from 1, a code and a message; rendering them never fails.
    public static func checkRefusal(_ diagnostics: [Diagnostic], file: String?, text: String?) {
        if !diagnostics.hasErrors { fail("refused without an error: \(diagnostics)") }
        for d in diagnostics {
            guard let at = d.location else { fail("`\(d.code)` has no place: \(d.message)") }
            if file.map({ at.file != $0 }) ?? false || at.line < 1 || at.column < 1 {
                fail("`\(d.code)` is placed at \(at), not in \(file ?? "a file")")
            }
            if d.message.isEmpty || d.code.rawValue.isEmpty { fail("a diagnostic without a code or a message: \(d)") }
        }
        _ = DiagnosticRenderer(sources: file.flatMap { f in text.map { [f: $0] } } ?? [:]).render(diagnostics)
        _ = DiagnosticRenderer.json(diagnostics)
    }
}
