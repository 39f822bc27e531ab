import Hummingbird
import HummingbirdCore
import Logging
import NIOCore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// What keeps slow clients from holding the server: a connection whose request has not been
/// answered `requestTimeout` after its first byte arrived is closed (headers or a body sent a
/// byte at a time, a slowloris), an idle keep-alive connection is closed after `idleTimeout`
/// (Hummingbird's idle timeout), and at most `maxConnections` are open at once (more wait in
/// the listen backlog).
struct SlowClientLimits: Sendable {
    var requestTimeout: Duration
    var idleTimeout: Duration
    var maxConnections: Int

    /// The HTTP/1.1 server with these limits.
    func server() -> HTTPServerBuilder {
        let idle = TimeAmount.nanoseconds(idleTimeout.nanoseconds)
        let request = TimeAmount.nanoseconds(requestTimeout.nanoseconds)
        return HTTPServerBuilder { responder in
            RequestDeadlineChannel(
                inner: HTTP1Channel(responder: responder, configuration: .init(idleTimeout: idle)), requestTimeout: request)
        }
    }

    /// The file descriptors kept for other things than client connections (the store's
    /// connections, the policy files, the log).
    static let reservedFiles = 256

    /// Raises the soft limit of open files to the hard limit, and lowers `maxConnections` to what
    /// the soft limit then allows; both logged.
    mutating func fitOpenFileLimit(logger: Logger) {
        let (before, after, hard) = Self.raiseOpenFileLimit()
        let allowed = max(16, after - Self.reservedFiles)
        logger.info(
            "open file limit",
            metadata: ["soft": "\(after)", "hard": "\(hard)", "was": "\(before)", "max_connections": "\(min(maxConnections, allowed))"])
        if allowed < maxConnections {
            logger.warning(
                "the open file limit allows fewer connections than configured; raise the limit (LimitNOFILE, ulimit -n)",
                metadata: ["configured": "\(maxConnections)", "allowed": "\(allowed)", "limit": "\(after)"])
            maxConnections = allowed
        }
    }

    /// Sets the soft `RLIMIT_NOFILE` to the hard one; (soft before, soft after, hard).
    static func raiseOpenFileLimit() -> (Int, Int, Int) {
        var limit = rlimit()
        #if canImport(Glibc)
            let resource = __rlimit_resource_t(UInt32(RLIMIT_NOFILE.rawValue))
        #else
            let resource = RLIMIT_NOFILE
        #endif
        guard getrlimit(resource, &limit) == 0 else { return (1024, 1024, 1024) }
        let clamp = { (v: rlim_t) -> Int in v > rlim_t(Int32.max) ? Int(Int32.max) : Int(v) }
        let before = clamp(limit.rlim_cur)
        if limit.rlim_cur < limit.rlim_max {
            var raised = limit
            raised.rlim_cur = limit.rlim_max
            if setrlimit(resource, &raised) == 0 { limit = raised }
        }
        return (before, clamp(limit.rlim_cur), clamp(limit.rlim_max))
    }
}

/// Hummingbird's HTTP/1.1 channel with a ``RequestDeadlineHandler`` in front of it.
struct RequestDeadlineChannel: ServerChildChannel {
    typealias Value = HTTP1Channel.Value
    let inner: HTTP1Channel
    let requestTimeout: TimeAmount

    func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Value> {
        let timeout = requestTimeout
        return channel.eventLoop.makeCompletedFuture {
            try channel.pipeline.syncOperations.addHandler(RequestDeadlineHandler(timeout: timeout), position: .first)
        }.flatMap { inner.setup(channel: channel, logger: logger) }
    }

    func handle(value: Value, logger: Logger) async {
        await inner.handle(value: value, logger: logger)
    }
}

/// Closes the connection when a request's answer has not started `timeout` after the request's
/// first byte: the clock starts at the first byte read while no request is under way and stops
/// at the first byte of the answer. It sits before the HTTP decoder, so it sees headers arrive
/// a byte at a time (the decoder passes nothing on until they are complete).
final class RequestDeadlineHandler: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer
    typealias OutboundIn = IOData
    typealias OutboundOut = IOData

    let timeout: TimeAmount
    private var deadline: Scheduled<Void>?

    init(timeout: TimeAmount) { self.timeout = timeout }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        if deadline == nil {
            let loopBound = NIOLoopBound(context, eventLoop: context.eventLoop)
            deadline = context.eventLoop.scheduleTask(in: timeout) { loopBound.value.close(promise: nil) }
        }
        context.fireChannelRead(data)
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        deadline?.cancel()
        deadline = nil
        context.write(data, promise: promise)
    }

    func channelInactive(context: ChannelHandlerContext) {
        deadline?.cancel()
        deadline = nil
        context.fireChannelInactive()
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        deadline?.cancel()
        deadline = nil
    }
}
