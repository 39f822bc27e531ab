import Foundation
import NIOConcurrencyHelpers

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A TCP proxy between the server under test and its database, that a test can stall (nothing
/// goes through either way, new connections are accepted and held: a database that accepts
/// connections but never answers, or a network that drops everything) and cut (every
/// connection through it is closed at once). Blocking sockets, two threads per connection.
final class TCPProxy: Sendable {
    let port: Int
    let upstream: Int
    private let listener: Int32
    private struct State {
        var stalled = false
        var stopped = false
        /// Open sockets (both sides of every connection), closed by `cut()`.
        var sockets: Set<Int32> = []
    }
    private let state = NIOLockedValueBox(State())

    init(upstream: Int) throws {
        self.upstream = upstream
        (listener, port) = try Socket.listen()
        let thread = Thread { [self] in acceptLoop() }
        thread.start()
    }

    /// Stops forwarding (`true`) or resumes (`false`); held bytes go through on resume.
    func stall(_ on: Bool) { state.withLockedValue { $0.stalled = on } }

    /// Closes every connection through the proxy (both sides).
    func cut() {
        // Shut down only: each pump then sees its connection end and closes the descriptors.
        for fd in state.withLockedValue({ $0.sockets }) { shutdown(fd, Int32(SHUT_RDWR)) }
    }

    func stop() {
        state.withLockedValue { $0.stopped = true }
        shutdown(listener, Int32(SHUT_RDWR))
        close(listener)
        cut()
    }

    private var stalled: Bool { state.withLockedValue { $0.stalled } }
    private var stopped: Bool { state.withLockedValue { $0.stopped } }

    private func acceptLoop() {
        while !stopped {
            let client = accept(listener, nil, nil)
            if client < 0 {
                if stopped { return }
                continue
            }
            _ = fcntl(client, F_SETFD, FD_CLOEXEC)
            let thread = Thread { [self] in connectUpstream(client) }
            thread.start()
        }
    }

    private func connectUpstream(_ client: Int32) {
        state.withLockedValue { _ = $0.sockets.insert(client) }
        // A stalled proxy holds new connections without connecting them.
        while stalled && !stopped { usleep(20_000) }
        guard let server = try? Socket.connect(port: upstream, timeout: .seconds(2)) else {
            forget(client)
            return
        }
        state.withLockedValue { _ = $0.sockets.insert(server) }
        // Short reads, so a pump notices a stall or a cut soon; writes as long as they take.
        Socket.setTimeout(server, .milliseconds(100), send: .seconds(10))
        Socket.setTimeout(client, .milliseconds(100), send: .seconds(10))
        let back = Thread { [self] in pump(from: server, to: client) }
        back.start()
        pump(from: client, to: server)
    }

    private func isOpen(_ fd: Int32) -> Bool {
        state.withLockedValue { $0.sockets.contains(fd) }
    }

    /// Copies bytes from `source` to `target` until either closes; waits while stalled.
    private func pump(from source: Int32, to target: Int32) {
        while isOpen(source) && isOpen(target) {
            if stalled {
                usleep(20_000)
                continue
            }
            guard let chunk = Socket.receive(source) else {
                if errno == EAGAIN || errno == EWOULDBLOCK { continue }
                break
            }
            if chunk.isEmpty { break }
            while stalled && isOpen(target) { usleep(20_000) }
            if !Socket.send(target, chunk) { break }
        }
        forget(source)
        forget(target)
    }

    /// Ends a connection's side; the first pump to let go of it closes it.
    private func forget(_ fd: Int32) {
        guard state.withLockedValue({ $0.sockets.remove(fd) != nil }) else { return }
        shutdown(fd, Int32(SHUT_RDWR))
        closeLater(fd)
    }

    /// Closes a descriptor after its other pump has let go of it (a closed descriptor's number
    /// may be reused by the next connection at once).
    private func closeLater(_ fd: Int32) {
        let thread = Thread {
            usleep(500_000)
            close(fd)
        }
        thread.start()
    }
}
