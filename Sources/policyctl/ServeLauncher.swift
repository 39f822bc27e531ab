import ArgumentParser
import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// `policyctl serve`: the server is its own package (`Server/`), so that checking policies never
/// builds it. This command runs its executable, `policyctl-serve`, with the same arguments: the
/// one next to `policyctl` (both installed together), otherwise the first on the `PATH`.
struct ServeLauncher: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve",
        abstract: "Serve the policies over HTTP (runs policyctl-serve, built by the package in Server/).",
        discussion: """
            The server is a package of its own, so that checking policies never builds it. This command \
            runs `policyctl-serve` with the same arguments: the one next to policyctl, otherwise the first \
            on the PATH. `policyctl-serve --help` lists the options. From the repository root, run it with \
            `swift run --package-path Server policyctl-serve ARGUMENTS`, or build it with \
            `swift build -c release --package-path Server --product policyctl-serve`.
            Exit codes: policyctl-serve's; 2 when it is not found.
            """)

    @Argument(parsing: .captureForPassthrough, help: "The arguments of policyctl-serve.")
    var arguments: [String] = []

    func run() throws {
        guard let server = Self.locate() else {
            let command = (["swift run --package-path Server policyctl-serve"] + arguments).joined(separator: " ")
            FileHandle.standardError.write(
                Data(
                    """
                    error: `policyctl serve` runs `policyctl-serve`, which is neither next to policyctl nor on the PATH
                      = help: the server is its own package: from the repository root, run `\(command)`

                    """.utf8))
            throw Exit.invalidInput
        }
        // Become the server: signals (SIGTERM, SIGHUP) and the exit code are its own.
        let argv = ([server] + arguments).map { strdup($0) } + [nil]
        execv(server, argv)
        FileHandle.standardError.write(Data("error: cannot run `\(server)`: \(String(cString: strerror(errno)))\n".utf8))
        throw Exit.invalidInput
    }

    /// `name` (`policyctl-serve` by default) next to this executable, or on the `PATH`.
    static func locate(_ name: String = "policyctl-serve") -> String? {
        var candidates: [String] = []
        if let me = Bundle.main.executableURL?.resolvingSymlinksInPath() {
            candidates.append(me.deletingLastPathComponent().appendingPathComponent(name).path)
        }
        let path = ProcessInfo.processInfo.environment["PATH"] ?? ""
        candidates += path.split(separator: ":").map { URL(fileURLWithPath: String($0)).appendingPathComponent(name).path }
        return candidates.first { FileManager.default.isExecutableFile(atPath: $0) }
    }
}
