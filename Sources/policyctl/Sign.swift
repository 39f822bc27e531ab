import ArgumentParser
import Foundation
import SessionPolicy
import SessionPolicyDelivery
import SessionPolicyYAML

struct Sign: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Sign a policy's machine into an envelope an app's updater verifies.",
        discussion: """
            Writes the signed envelope (sessionpolicy-envelope/1, a compact JWS signed with ES256; \
            docs/envelope.md) of a machine document, or of a policy file compiled first, to standard \
            output or --output, and what was signed to standard error. The key is a PEM P-256 private \
            key (openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256). The serial is the \
            signing time in milliseconds unless --serial gives one: sign a later machine with a larger \
            serial, since an updater never installs a smaller one over a newer machine.
            Exit codes: 0 signed; 2 invalid input (the machine, the policy or the key); 64 usage error.
            """)

    @Argument(help: "A machine document (policyctl compile --format machine) or a policy file.")
    var machine: String

    @Option(help: ArgumentHelp("The PEM private key to sign with.", valueName: "pem"))
    var key: String

    @Option(help: ArgumentHelp("The serial, from 1 to 2^53-1 (default: the signing time in milliseconds).", valueName: "n"))
    var serial: Int64?

    @Option(help: ArgumentHelp("How long the envelope is valid, as a policy duration (default 30d).", valueName: "duration"))
    var validFor = "30d"

    @Option(help: ArgumentHelp("The signing time, RFC 3339 (default: now).", valueName: "time"))
    var issuedAt: String?

    @Option(name: .shortAndLong, help: ArgumentHelp("Write the envelope to this file instead of standard output.", valueName: "file"))
    var output: String?

    func validate() throws {
        if let serial, !(1...EnvelopeReader.maxSerial).contains(serial) {
            throw ValidationError("`--serial` must be from 1 to \(EnvelopeReader.maxSerial), not \(serial)")
        }
        if case let .failure(error) = TimeSpan.parse(validFor) {
            throw ValidationError("`--valid-for` must be a duration like `30d` or `12h`, not `\(validFor)` (\(error))")
        }
        if case .success(let span) = TimeSpan.parse(validFor), span.seconds == 0 {
            throw ValidationError("`--valid-for` must be longer than 0s")
        }
        if let issuedAt, Timestamp.parse(issuedAt) == nil {
            throw ValidationError("`--issued-at` must be a time like `2026-03-01T09:00:00Z`, not `\(issuedAt)`")
        }
    }

    func run() throws {
        let signer: MachineSigner
        switch SourceFile.read(key, limit: 64 * 1024) {
        case let .failure(e):
            emit(e.diagnostics, sources: [:], json: false)
            throw Exit.invalidInput
        case let .success(data):
            do {
                signer = try MachineSigner(privateKeyPEM: String(decoding: data, as: UTF8.self), file: key)
            } catch {
                emit(error.diagnostics, sources: [:], json: false)
                throw Exit.invalidInput
            }
        }
        let policyMachine = try Self.loadMachine(machine)
        let issued = issuedAt.flatMap(Timestamp.parse) ?? Timestamp(millisecondsSinceEpoch: Int64(Date().timeIntervalSince1970 * 1000))
        guard case let .success(span) = TimeSpan.parse(validFor) else { throw Exit.invalidInput }
        let expires = issued.adding(span)
        let envelope = try signer.sign(
            policyMachine, serial: serial ?? max(1, issued.millisecondsSinceEpoch), issuedAt: issued, expiresAt: expires)
        if let output {
            guard FileManager.default.createFile(atPath: output, contents: Data((envelope + "\n").utf8)) else {
                FileHandle.standardError.write(Data("error: cannot write `\(output)`\n".utf8))
                throw Exit.invalidInput
            }
        } else {
            print(envelope)
        }
        FileHandle.standardError.write(
            Data(
                """
                signed policy `\(policyMachine.name)` (machine \(policyMachine.digest)), serial \(serial ?? max(1, issued.millisecondsSinceEpoch)), \
                issued \(issued), valid until \(expires), with key \(signer.keyID)

                """.utf8))
    }

    /// The machine of a machine document, or of a policy file compiled: exit 2 with the
    /// diagnostics when neither loads.
    static func loadMachine(_ path: String) throws -> PolicyMachine {
        let data: Data
        switch SourceFile.read(path) {
        case let .failure(e):
            emit(e.diagnostics, sources: [:], json: false)
            throw Exit.invalidInput
        case let .success(d): data = d
        }
        if case let .success(node?) = JSONSyntax.parse(data, file: path), case let .mapping(pairs) = node.kind,
            pairs.contains(where: { if case .scalar("format", _) = $0.key.kind { true } else { false } })
        {
            do {
                return try PolicyMachine(document: data, file: path)
            } catch {
                emit(error.diagnostics, sources: [path: String(decoding: data, as: UTF8.self)], json: false)
                throw Exit.invalidInput
            }
        }
        switch PolicyFile.load(path) {
        case let .failure(e):
            emit(e.diagnostics, sources: [path: SourceFile.quotable(path) ?? ""], json: false)
            throw Exit.invalidInput
        case let .success(loaded):
            emit(loaded.warnings, sources: [path: loaded.text], json: false)
            return loaded.compiled.portable
        }
    }
}
