import Foundation
public import HTTPTypes
public import Hummingbird
import NIOCore
public import SessionPolicy

/// Diagnostic codes only the server uses (documented in docs/diagnostics.md with the others).
extension DiagnosticCode {
    /// No route for this path, or no such session, device session or policy.
    public static let notFound = DiagnosticCode("not-found")
    /// No valid user token, or a wrong pool secret.
    public static let unauthorized = DiagnosticCode("unauthorized")
    /// A valid token that may not do this (another user's session).
    public static let forbidden = DiagnosticCode("forbidden")
    /// Too many requests from this client or for this device.
    public static let rateLimited = DiagnosticCode("rate-limited")
    /// The store failed; nothing was decided or stored.
    public static let storeUnavailable = DiagnosticCode("store-unavailable")
    /// A ticket that is unknown, already used, or expired.
    public static let invalidTicket = DiagnosticCode("invalid-ticket")
    /// Any other HTTP failure (the message says which).
    public static let requestFailed = DiagnosticCode("request-failed")
    /// An event dated further in the server's future than the allowed clock skew.
    public static let eventInFuture = DiagnosticCode("event-in-future")
    /// An event delivered later after its time than the allowed delay.
    public static let eventTooLate = DiagnosticCode("event-too-late")
    /// A detecting app that no policy is bound to (`apps`).
    public static let unboundApp = DiagnosticCode("unbound-app")
    /// A known route asked with a method it does not take (405, with `Allow`).
    public static let methodNotAllowed = DiagnosticCode("method-not-allowed")
    /// A signed machine asked of a server with no signing key.
    public static let machineNotSigned = DiagnosticCode("machine-not-signed")
    /// A user pool the server is not configured for.
    public static let unknownPool = DiagnosticCode("unknown-pool")
}

/// A request that cannot be answered, with the located diagnostics of the CLI's JSON output
/// (`{"diagnostics": [...]}`) as its body.
public struct APIError: HTTPResponseError {
    public var status: HTTPResponse.Status
    /// What is wrong.
    public var diagnostics: [Diagnostic]
    /// Extra headers (`Retry-After`, `WWW-Authenticate`).
    public var headers: HTTPFields

    /// Creates an error.
    public init(_ status: HTTPResponse.Status, _ diagnostics: [Diagnostic], headers: HTTPFields = [:]) {
        self.status = status
        self.diagnostics = diagnostics
        self.headers = headers
    }

    /// Creates an error with one diagnostic without a location.
    public init(
        _ status: HTTPResponse.Status, _ code: DiagnosticCode, _ message: String, help: String? = nil, headers: HTTPFields = [:]
    ) {
        self.init(status, [.error(code, message, at: nil, help: help)], headers: headers)
    }

    /// A 405: `request`'s path is taken by routes, with the methods `allowed` only.
    static func methodNotAllowed(_ request: Request, allowed: [HTTPRequest.Method]) -> APIError {
        let list = allowed.map(\.rawValue).joined(separator: ", ")
        return APIError(
            .methodNotAllowed, .methodNotAllowed, "`\(request.uri.path)` does not take `\(request.method.rawValue)`",
            help: "use \(list)", headers: [.allow: list])
    }

    /// `{"diagnostics": [...]}`, sorted by place, written like every other response: compact,
    /// sorted keys, one line.
    public func response(from request: Request, context: some RequestContext) throws -> Response {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let body = (try? encoder.encode(["diagnostics": diagnostics.sortedForOutput()])) ?? Data(#"{"diagnostics":[]}"#.utf8)
        var response = ServerResponseEncoder.response(body)
        response.status = status
        for field in headers { response.headers[field.name] = field.value }
        return response
    }

    static func badRequest(_ diagnostics: [Diagnostic]) -> APIError { APIError(.badRequest, diagnostics) }

    static func notFound(_ message: String, help: String? = nil) -> APIError {
        APIError(.notFound, .notFound, message, help: help)
    }

    static func unknownPolicy(_ name: String, known: [String]) -> APIError {
        var help = "the server serves " + (known.isEmpty ? "no policies" : known.sorted().map { "`\($0)`" }.joined(separator: ", "))
        if let near = Suggestion.closest(to: name, in: known) { help = "did you mean `\(near)`? " + help }
        return APIError(.notFound, .unknownPolicy, "no policy `\(name)`", help: help)
    }

    /// A 413: the body is over its byte limit (`--max-body`, `--max-batch-body`).
    static func bodyTooLarge(_ message: String) -> APIError {
        APIError(
            .contentTooLarge, .inputTooLarge, message, help: "send at most the configured limit (`--max-body`, `--max-batch-body`)")
    }

    static func store(_ error: StoreError) -> APIError {
        APIError(
            .serviceUnavailable, .storeUnavailable, "the session store is unavailable; nothing was decided or stored",
            help: "retry later; the server's log has the cause")
    }
}

/// Turns the router's and the body reader's own errors into diagnostic JSON too, so every
/// error a client sees has one shape.
struct DiagnosticErrorMiddleware<Context: RequestContext>: RouterMiddleware {
    static var tooLarge: APIError { .bodyTooLarge("the request body is too large") }

    /// The API's routes (method, path template with `{name}` parameters), to tell a wrong
    /// method (405 with `Allow`) from an unknown path (404).
    var routes: [(method: HTTPRequest.Method, path: String)] = []

    /// The methods the routes take on `path`, in the routes' order. Where several templates
    /// match, the one with the most fixed segments is the path's (as in OpenAPI, a concrete
    /// segment wins over a parameter): `/sessions/alice/revoke` takes only `POST`.
    func methods(for path: String) -> [HTTPRequest.Method] {
        let segments = path.split(separator: "/", omittingEmptySubsequences: true)
        var out: [HTTPRequest.Method] = []
        var fixed = -1
        for route in routes {
            let template = route.path.split(separator: "/", omittingEmptySubsequences: true)
            guard template.count == segments.count else { continue }
            let isParameter = { (t: Substring) in t.hasPrefix("{") && t.hasSuffix("}") }
            guard zip(template, segments).allSatisfy({ t, s in isParameter(t) || t == s }) else { continue }
            let count = template.filter { !isParameter($0) }.count
            if count > fixed { (fixed, out) = (count, []) }
            if count == fixed, !out.contains(route.method) { out.append(route.method) }
        }
        return out
    }

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        do {
            return try await next(request, context)
        } catch let error as APIError {
            throw error
        } catch is NIOTooManyBytesError {
            throw Self.tooLarge
        } catch let error as HTTPError {
            switch error.status {
            case .notFound where !methods(for: request.uri.path).isEmpty:
                throw APIError.methodNotAllowed(request, allowed: methods(for: request.uri.path))
            case .notFound:
                throw APIError(
                    .notFound, .notFound, "no route `\(request.method.rawValue) \(request.uri.path)`",
                    help: "the API is under `/v1`; see docs/openapi.yaml")
            case .contentTooLarge:
                throw Self.tooLarge
            default:
                throw APIError(error.status, .requestFailed, error.body ?? error.status.reasonPhrase.lowercased())
            }
        }
    }
}
