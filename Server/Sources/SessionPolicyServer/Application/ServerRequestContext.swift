public import Hummingbird
public import NIOCore

/// The request context: Hummingbird's, plus the client's address (for rate limits) and the
/// server's request decoder and response encoder, so handlers take and return values.
public struct ServerRequestContext: RequestContext, RemoteAddressRequestContext {
    public var coreContext: CoreRequestContextStorage
    /// The connected client's address.
    public let remoteAddress: SocketAddress?
    /// Reads request bodies strictly, within the configured limits (set per route by the server).
    public var requestDecoder: StrictRequestDecoder
    /// The request's id (`X-Request-Id`): the request's own when usable, else one the server made.
    public var requestID = ""
    /// Where a handler notes who the request came from, for the access log (nil when it is off).
    var actorSeen: RequestActor?
    /// Writes response values as sorted-key JSON.
    public var responseEncoder: ServerResponseEncoder { ServerResponseEncoder() }

    public init(source: ApplicationRequestContextSource) {
        self.coreContext = .init(source: source)
        self.remoteAddress = source.channel.remoteAddress
        self.requestDecoder = StrictRequestDecoder()
    }
}
