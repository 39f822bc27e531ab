public import HTTPTypes
import Hummingbird
public import Logging
import NIOConcurrencyHelpers
import SessionPolicyDelivery

extension HTTPField.Name {
    /// `X-Request-Id`: the request's id, taken from the request or made by the server, and
    /// returned in every response.
    public static let requestID = Self("X-Request-Id")!
}

/// The id of the request being served. Every log line written while it is served carries it as
/// `request_id` (through ``metadataProvider``), every decision record it writes keeps it, and its
/// response returns it in `X-Request-Id`.
public enum RequestID {
    /// The id of the request this task serves, nil outside a request.
    @TaskLocal public static var current: String?

    /// Adds `request_id` to every log line written while a request is served: give it to
    /// `LoggingSystem.bootstrap(_:metadataProvider:)`.
    public static let metadataProvider = Logger.MetadataProvider {
        guard let id = current else { return [:] }
        return ["request_id": .string(id)]
    }

    /// The longest `X-Request-Id` taken from a request.
    static let maxLength = 128

    /// A request's own `X-Request-Id` when it is usable: 1 to 128 characters, each a letter, a
    /// digit or one of `-._:+/=` (UUIDs, W3C trace ids, base64), so that it can go into a log line
    /// as it is. Anything else is not taken, and the server makes an id instead.
    static func accepted(_ header: String?) -> String? {
        guard let header, !header.isEmpty, header.utf8.count <= maxLength else { return nil }
        let allowed = { (b: UInt8) -> Bool in
            switch b {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"): true
            case UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: ":"), UInt8(ascii: "+"), UInt8(ascii: "/"),
                UInt8(ascii: "="):
                true
            default: false
            }
        }
        return header.utf8.allSatisfy(allowed) ? header : nil
    }

    /// This process's prefix for the ids it makes: 64 random bits, drawn once.
    private static let prefix = hex(UInt64.random(in: .min ... .max))
    private static let counter = NIOLockedValueBox<UInt64>(0)

    /// A new id: 32 lowercase hex digits, this process's random prefix and a counter, unique
    /// across servers without a random draw per request.
    static func make() -> String {
        let n = counter.withLockedValue { value in
            value &+= 1
            return value
        }
        return prefix + hex(n)
    }

    private static func hex(_ value: UInt64) -> String {
        let digits = String(value, radix: 16)
        return String(repeating: "0", count: 16 - digits.count) + digits
    }
}

/// Who a request turned out to come from, as its handler learned it from the token, for the
/// access log line written after the handler returns.
final class RequestActor: Sendable {
    private let box = NIOLockedValueBox<DecisionActor?>(nil)

    /// Records the caller.
    func note(_ actor: DecisionActor) { box.withLockedValue { $0 = actor } }

    /// The caller, once a handler has checked the request's token.
    var actor: DecisionActor? { box.withLockedValue { $0 } }
}

/// The outermost middleware: gives every request its id (``RequestID``), returns it in
/// `X-Request-Id` (errors included), and with the access log on (`log.access`) writes one line
/// per request at `info`: `method`, `route` (the path template), `status`, `duration_ms`,
/// `actor` (`user:ID` or `service:CLIENT`, `-` when no token was checked) and `request_id`.
struct RequestLogMiddleware: RouterMiddleware {
    typealias Context = ServerRequestContext
    /// The access log's logger, nil when it is off.
    let accessLogger: Logger?
    /// Whether a user's id in `actor` is written as its SHA-256 (`decision.log.hash.users`).
    let hashUsers: Bool

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let id = RequestID.accepted(request.headers[.requestID]) ?? RequestID.make()
        var context = context
        context.requestID = id
        guard let accessLogger else {
            let served = context
            do {
                var response = try await RequestID.$current.withValue(id) { try await next(request, served) }
                response.headers[.requestID] = id
                return response
            } catch let error as any HTTPResponseError {
                var response = try error.response(from: request, context: context)
                response.headers[.requestID] = id
                return response
            }
        }
        let start = ContinuousClock.now
        let seen = RequestActor()
        context.actorSeen = seen
        let served = context
        var response: Response
        do {
            response = try await RequestID.$current.withValue(id) { try await next(request, served) }
        } catch let error as any HTTPResponseError {
            response = try error.response(from: request, context: context)
        } catch {
            log(accessLogger, request, context, status: 500, start: start, actor: seen.actor, id: id)
            throw error
        }
        response.headers[.requestID] = id
        log(accessLogger, request, context, status: Int(response.status.code), start: start, actor: seen.actor, id: id)
        return response
    }

    private func log(
        _ logger: Logger, _ request: Request, _ context: Context, status: Int, start: ContinuousClock.Instant, actor: DecisionActor?,
        id: String
    ) {
        let elapsed = ContinuousClock.now - start
        let milliseconds = Double(elapsed.components.seconds) * 1000 + Double(elapsed.components.attoseconds) / 1e15
        let shown = actor.map { (hashUsers ? DecisionStream.hashed($0) : $0).text } ?? "-"
        logger.info(
            "request",
            metadata: [
                "method": "\(request.method.rawValue)", "route": "\(context.endpointPath ?? "unmatched")", "status": "\(status)",
                "duration_ms": "\((milliseconds * 1000).rounded() / 1000)", "actor": "\(shown)", "request_id": "\(id)",
            ])
    }
}
