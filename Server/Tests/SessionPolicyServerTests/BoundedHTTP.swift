import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Blocking TCP sockets for the fault and slow-client tests: every read and write has a
/// timeout, so a server that never answers fails the test instead of hanging it. They run on
/// threads of their own (`onThread`), never on Swift concurrency's few threads, which the server
/// under test needs.
enum Socket {
    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    /// A connected socket to 127.0.0.1:`port`, its reads and writes bounded by `timeout`.
    static func connect(port: Int, timeout: Duration) throws -> Int32 {
        #if canImport(Glibc)
            let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        #else
            let fd = socket(AF_INET, SOCK_STREAM, 0)
        #endif
        guard fd >= 0 else { throw Failure(description: "socket: \(errno)") }
        setTimeout(fd, timeout)
        var one: Int32 = 1
        setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let ok = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard ok == 0 else {
            let e = errno
            Glibc.close(fd)
            throw Failure(description: "connect to \(port): errno \(e)")
        }
        return fd
    }

    /// Bounds each read by `timeout`, and each write by `send` (by `timeout` when nil).
    static func setTimeout(_ fd: Int32, _ timeout: Duration, send: Duration? = nil) {
        func tv(_ d: Duration) -> timeval {
            timeval(tv_sec: Int(d.components.seconds), tv_usec: Int(d.components.attoseconds / 1_000_000_000_000))
        }
        var r = tv(timeout)
        var w = tv(send ?? timeout)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &r, socklen_t(MemoryLayout<timeval>.size))
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &w, socklen_t(MemoryLayout<timeval>.size))
    }

    /// Writes all of `bytes`; false when the peer is gone or the write timed out.
    @discardableResult
    static func send(_ fd: Int32, _ bytes: [UInt8]) -> Bool {
        var sent = 0
        while sent < bytes.count {
            let n = bytes[sent...].withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if n <= 0 { return false }
            sent += n
        }
        return true
    }

    /// Up to `max` bytes; empty at the end of the stream, nil on a timeout or an error.
    static func receive(_ fd: Int32, max: Int = 65536) -> [UInt8]? {
        var buffer = [UInt8](repeating: 0, count: max)
        let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, max, 0) }
        if n < 0 { return nil }
        return Array(buffer[0..<n])
    }

    /// A listening socket on 127.0.0.1 (a free port) and its port.
    static func listen() throws -> (Int32, Int) {
        #if canImport(Glibc)
            let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        #else
            let fd = socket(AF_INET, SOCK_STREAM, 0)
        #endif
        var one: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = 0
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { p -> Int32 in
                guard bind(fd, p, length) == 0, Glibc.listen(fd, 512) == 0 else { return -1 }
                return getsockname(fd, p, &length)
            }
        }
        guard bound == 0 else { throw Failure(description: "listen: errno \(errno)") }
        return (fd, Int(UInt16(bigEndian: address.sin_port)))
    }

    /// Runs `body` on a thread of its own; returns when it has.
    static func onThread<T: Sendable>(_ body: @escaping @Sendable () -> T) async -> T {
        await withCheckedContinuation { continuation in
            let thread = Thread { continuation.resume(returning: body()) }
            thread.stackSize = 1 << 20
            thread.start()
        }
    }
}

/// One keep-alive HTTP/1.1 connection to the server under test, every wait bounded.
final class BoundedHTTP {
    let port: Int
    let timeout: Duration
    private var fd: Int32 = -1

    init(port: Int, timeout: Duration) {
        self.port = port
        self.timeout = timeout
    }

    deinit { close() }

    func close() {
        if fd >= 0 { Glibc.close(fd) }
        fd = -1
    }

    struct Reply {
        var status: Int
        var body: String
    }

    /// Sends a request and reads its answer; throws on a timeout or a closed connection (the
    /// connection is then closed, and the next request opens another).
    func send(_ method: String, _ path: String, body: String = "", headers: [String: String] = [:]) throws -> Reply {
        do {
            if fd < 0 { fd = try Socket.connect(port: port, timeout: timeout) }
            var head = "\(method) \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: \(body.utf8.count)\r\n"
            if !body.isEmpty { head += "Content-Type: application/json\r\n" }
            for (k, v) in headers { head += "\(k): \(v)\r\n" }
            guard Socket.send(fd, Array((head + "\r\n" + body).utf8)) else { throw Socket.Failure(description: "send failed") }
            return try readReply()
        } catch {
            close()
            throw error
        }
    }

    private func readReply() throws -> Reply {
        var data: [UInt8] = []
        let separator: [UInt8] = Array("\r\n\r\n".utf8)
        var headEnd: Int?
        while headEnd == nil {
            guard let chunk = Socket.receive(fd) else { throw Socket.Failure(description: "no answer within \(timeout)") }
            guard !chunk.isEmpty else { throw Socket.Failure(description: "connection closed") }
            data += chunk
            headEnd = data.firstRange(of: separator)?.upperBound
        }
        let head = String(decoding: data[..<headEnd!], as: UTF8.self)
        let lines = head.split(separator: "\r\n")
        let status = Int(lines.first?.split(separator: " ").dropFirst().first ?? "") ?? 0
        let length =
            lines.dropFirst().compactMap { line -> Int? in
                let parts = line.split(separator: ":", maxSplits: 1)
                guard parts.count == 2, parts[0].lowercased() == "content-length" else { return nil }
                return Int(parts[1].trimmingCharacters(in: .whitespaces))
            }.first ?? 0
        var body = Array(data[headEnd!...])
        while body.count < length {
            guard let chunk = Socket.receive(fd) else { throw Socket.Failure(description: "body not complete within \(timeout)") }
            guard !chunk.isEmpty else { throw Socket.Failure(description: "connection closed in the body") }
            body += chunk
        }
        return Reply(status: status, body: String(decoding: body, as: UTF8.self))
    }
}
