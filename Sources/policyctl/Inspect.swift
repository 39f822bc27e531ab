import ArgumentParser
import Foundation
import SessionPolicy
import SessionPolicyDelivery
import SessionPolicyYAML

struct Inspect: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Verify a signed machine envelope and print what it holds.",
        discussion: """
            Runs every check an app's updater runs (docs/envelope.md) with the given public keys, at \
            --at (default: now) with the default tolerance of 10 minutes, and for --policy when \
            given; prints the policy, serial, validity, key id and machine digest, or the first \
            failed check as a diagnostic. --machine prints the machine document instead.
            Exit codes: 0 verified; 2 refused, or a key or file that cannot be read; 64 usage error.
            """)

    @Argument(help: "The envelope file, or `-` for standard input.")
    var envelope: String

    @Option(name: .customLong("public-key"), help: ArgumentHelp("A pinned PEM public key (repeat for several).", valueName: "pem"))
    var publicKeys: [String] = []

    @Option(help: ArgumentHelp("The policy the envelope must hold.", valueName: "name"))
    var policy: String?

    @Option(help: ArgumentHelp("The time of the validity checks, RFC 3339 (default: now).", valueName: "time"))
    var at: String?

    @Option(help: "Output format: human or json.")
    var format: OutputFormat = .human

    @Flag(help: "Print the machine document (canonical) instead of the summary.")
    var machine = false

    func validate() throws {
        if publicKeys.isEmpty {
            throw ValidationError("give the pinned public key with `--public-key PEM`: an envelope is only read verified")
        }
        if let at, Timestamp.parse(at) == nil {
            throw ValidationError("`--at` must be a time like `2026-03-01T09:00:00Z`, not `\(at)`")
        }
    }

    func run() throws {
        var keys: [TrustedKey] = []
        for path in publicKeys {
            switch SourceFile.read(path, limit: 64 * 1024) {
            case let .failure(e):
                emit(e.diagnostics, sources: [:], json: format == .json)
                throw Exit.invalidInput
            case let .success(data):
                do {
                    keys.append(try TrustedKey(pem: String(decoding: data, as: UTF8.self), file: path))
                } catch {
                    emit(error.diagnostics, sources: [:], json: format == .json)
                    throw Exit.invalidInput
                }
            }
        }
        let file = envelope == "-" ? "<stdin>" : envelope
        let data: Data
        switch SourceFile.read(envelope, limit: EnvelopeReader.maxBytes) {
        case let .failure(e):
            emit(e.diagnostics, sources: [:], json: format == .json)
            throw Exit.invalidInput
        case let .success(d): data = d
        }
        let now = at.flatMap(Timestamp.parse) ?? Timestamp(millisecondsSinceEpoch: Int64(Date().timeIntervalSince1970 * 1000))
        switch EnvelopeReader.read(
            data, keys: keys, policy: policy, now: now, toleranceMilliseconds: MachineUpdater.defaultToleranceMilliseconds, file: file)
        {
        case let .failure(e):
            // The envelope is one line: quote its first 200 characters at most.
            let firstLine = String(String(decoding: data.prefix(200), as: UTF8.self).prefix { $0 != "\n" })
            emit(e.diagnostics, sources: [file: firstLine], json: format == .json)
            throw Exit.invalidInput
        case let .success(signed):
            if machine {
                print(signed.machine.document)
            } else if format == .json {
                print(
                    #"{"policy":\#(json(signed.policy)),"serial":\#(signed.serial),"issued_at":"\#(signed.issuedAt)","expires_at":"\#(signed.expiresAt)","key_id":"\#(signed.keyID)","digest":"\#(signed.digest)"}"#
                )
            } else {
                print(
                    """
                    verified: policy `\(signed.policy)`, serial \(signed.serial)
                      machine    \(signed.digest)
                      key        \(signed.keyID)
                      issued     \(signed.issuedAt)
                      valid until \(signed.expiresAt)
                    """)
            }
        }
    }

    private func json(_ s: String) -> String {
        let data = try? JSONSerialization.data(withJSONObject: s, options: [.fragmentsAllowed])
        return data.map { String(decoding: $0, as: UTF8.self) } ?? "\"\""
    }
}
