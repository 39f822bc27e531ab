import Foundation

/// A throwaway PostgreSQL cluster of the fault tests' own (initdb on a free port in a temporary
/// directory), so that restarting and crashing it disturbs no other test. It needs PostgreSQL's
/// programs: the directory `SESSIONPOLICY_TEST_PGBIN` names (`.ci/run` sets it), or the newest
/// `/usr/lib/postgresql/*/bin`. As root, the programs run as the user `postgres` (initdb refuses root).
struct TestCluster: Sendable {
    let bin: String
    let directory: URL
    let port: Int

    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    /// PostgreSQL's programs, if they are here.
    static let bin: String? = {
        let fm = FileManager.default
        if let dir = ProcessInfo.processInfo.environment["SESSIONPOLICY_TEST_PGBIN"] {
            return fm.isExecutableFile(atPath: dir + "/pg_ctl") ? dir : nil
        }
        let root = "/usr/lib/postgresql"
        let versions = ((try? fm.contentsOfDirectory(atPath: root)) ?? []).compactMap(Int.init).sorted()
        return versions.reversed().map { "\(root)/\($0)/bin" }.first { fm.isExecutableFile(atPath: $0 + "/pg_ctl") }
    }()

    static var isRoot: Bool { getuid() == 0 }

    /// Creates and starts a cluster.
    static func start() throws -> TestCluster {
        guard let bin else { throw Failure(description: "no PostgreSQL programs (set SESSIONPOLICY_TEST_PGBIN)") }
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("pg-fault-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        if isRoot { try run("/bin/chown", ["postgres:postgres", directory.path]) }
        let (probe, port) = try Socket.listen()
        close(probe)
        let cluster = TestCluster(bin: bin, directory: directory, port: port)
        try cluster.pg(
            "\(bin)/initdb -D \(directory.path)/data -U postgres --auth=trust -E UTF8 --locale=C.UTF-8 --no-sync >/dev/null")
        try cluster.pg(
            "echo 'fsync = off' >> \(directory.path)/data/postgresql.conf && "
                + "echo 'max_connections = 60' >> \(directory.path)/data/postgresql.conf")
        try cluster.start()
        return cluster
    }

    var url: String { "postgres://postgres@127.0.0.1:\(port)/postgres" }

    func start() throws {
        try pg(
            "\(bin)/pg_ctl -D \(directory.path)/data -l \(directory.path)/server.log "
                + "-o '-p \(port) -k \(directory.path) -c listen_addresses=127.0.0.1' -w -t 30 start >/dev/null")
    }

    /// `pg_ctl stop -m MODE` (`fast`: clients are told and disconnected; `immediate`: a crash,
    /// recovered at the next start).
    func stop(_ mode: String) throws {
        try pg("\(bin)/pg_ctl -D \(directory.path)/data -m \(mode) -w -t 30 stop >/dev/null")
    }

    /// Stops the cluster and removes it.
    func destroy() {
        try? stop("immediate")
        try? FileManager.default.removeItem(at: directory)
    }

    /// Runs `command` (as `postgres` when root). The shell first closes every descriptor it
    /// inherited but 0-2: `pg_ctl start` leaves a daemon behind, which would otherwise keep the
    /// test's sockets open (a connection the server closes would stay open) and the pipe by which
    /// Foundation learns that the command ended (`waitUntilExit` would never return).
    private func pg(_ command: String) throws {
        let closeInherited = #"for fd in /proc/$$/fd/*; do n=${fd##*/}; [ "$n" -gt 2 ] && eval "exec $n>&-"; done; "#
        if Self.isRoot {
            try Self.run("/bin/bash", ["-c", closeInherited + "exec su postgres -s /bin/sh -c \"$0\"", command])
        } else {
            try Self.run("/bin/bash", ["-c", closeInherited + "exec /bin/sh -c \"$0\"", command])
        }
    }

    private static func run(_ program: String, _ arguments: [String]) throws {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: program)
        p.arguments = arguments
        try p.run()
        p.waitUntilExit()
        guard p.terminationStatus == 0 else {
            throw Failure(description: "`\(program) \(arguments.joined(separator: " "))` exited \(p.terminationStatus)")
        }
    }
}
