import HTTPTypes
import Hummingbird
import ServiceContextModule
import SessionPolicy
import Tracing

/// The server's OpenTelemetry traces (`tracing.otlp.endpoint`): a span for each request, and
/// within it for the token check, the store's reads and writes and the evaluation. The tracer
/// rides along with the request in a task-local, so that the stores and the session service need
/// no parameter for it; without one (tracing off, the default) every span below is one
/// task-local read and the work itself, nothing else.
enum RequestTracing {
    /// The tracer of the request this task serves; nil when tracing is off or outside a request.
    @TaskLocal static var tracer: (any SpanStarter)?
    /// Whether spans may carry the user's id (`tracing.user.ids`).
    @TaskLocal static var userIDs = false

    /// Runs `body` in a span named `name` of the current trace, when there is one: errors thrown
    /// are recorded on it, and spans started in `body` are its children.
    static func span<T, E: Error>(
        _ name: String, kind: SpanKind = .internal, _ body: (_ span: (any Span)?) async throws(E) -> T
    ) async throws(E) -> T {
        guard let tracer else { return try await body(nil) }
        let span = tracer.start(name, context: .current ?? .topLevel, kind: kind)
        defer { span.end() }
        let result: Result<T, E> = await ServiceContext.$current.withValue(span.context) {
            do throws(E) {
                return .success(try await body(span))
            } catch {
                return .failure(error)
            }
        }
        switch result {
        case let .success(value):
            return value
        case let .failure(error):
            span.recordError(error)
            span.setStatus(.init(code: .error))
            throw error
        }
    }

    /// A span around synchronous work that may run on another thread (the evaluation inside a
    /// store's transaction): its parent is `parent`, captured in the request's task.
    static func span<T>(
        _ name: String, parent: ServiceContext?, tracer: (any SpanStarter)?, _ body: (_ span: (any Span)?) throws -> T
    ) rethrows -> T {
        guard let tracer, let parent else { return try body(nil) }
        let span = tracer.start(name, context: parent, kind: .internal)
        defer { span.end() }
        do {
            return try body(span)
        } catch {
            span.recordError(error)
            span.setStatus(.init(code: .error))
            throw error
        }
    }

    /// Adds a decision's attributes to `span`: the policy, its machine's digest, the decision and its reason.
    /// (`digest` is looked up only when traced.)
    static func decided(_ span: (any Span)?, policy: String, digest: @autoclosure () -> String?, _ outcome: Outcome) {
        guard let span else { return }
        span.attributes["sessionpolicy.policy"] = policy
        if let digest = digest() { span.attributes["sessionpolicy.machine.digest"] = digest }
        span.attributes["sessionpolicy.decision"] = outcome.decision?.rawValue ?? "none"
        span.attributes["sessionpolicy.reason"] = outcome.reason.rawValue
    }
}

/// Starts spans with one tracer; the tracer's own span type stays inside.
protocol SpanStarter: Sendable {
    func start(_ name: String, context: ServiceContext, kind: SpanKind) -> any Span
    /// The trace a request continues: its W3C `traceparent` (and `tracestate`), or a new one.
    func extract(_ fields: HTTPFields) -> ServiceContext
}

/// A ``SpanStarter`` over a concrete tracer (swift-otel's, or a test's).
struct TracerSpans<T: Tracer>: SpanStarter {
    let tracer: T

    func start(_ name: String, context: ServiceContext, kind: SpanKind) -> any Span {
        tracer.startSpan(name, context: context, ofKind: kind)
    }

    func extract(_ fields: HTTPFields) -> ServiceContext {
        var context = ServiceContext.topLevel
        tracer.extract(fields, into: &context, using: HTTPFieldsExtractor())
        return context
    }
}

/// Reads trace headers from a request's fields.
struct HTTPFieldsExtractor: Extractor {
    func extract(key: String, from fields: HTTPFields) -> String? {
        guard let name = HTTPField.Name(key) else { return nil }
        return fields[name]
    }
}

/// The span of each request (kind `server`), named `METHOD /route` with the route's template, as
/// OpenTelemetry's HTTP conventions name them; it continues the trace of the request's
/// `traceparent`. Attributes: `http.request.method`, `http.route`, `http.response.status_code`,
/// `sessionpolicy.request_id`; a status of 500 or more marks the span an error.
struct TracingMiddleware<Context: RequestContext>: RouterMiddleware {
    let tracer: any SpanStarter
    let userIDs: Bool

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let parent = tracer.extract(request.headers)
        let route = context.endpointPath ?? "unmatched"
        let span = tracer.start("\(request.method.rawValue) \(route)", context: parent, kind: .server)
        defer { span.end() }
        span.attributes["http.request.method"] = request.method.rawValue
        span.attributes["http.route"] = route
        if let id = RequestID.current { span.attributes["sessionpolicy.request_id"] = id }
        do {
            let response = try await RequestTracing.$tracer.withValue(tracer) {
                try await RequestTracing.$userIDs.withValue(userIDs) {
                    try await ServiceContext.$current.withValue(span.context) { try await next(request, context) }
                }
            }
            finish(span, status: response.status.code)
            return response
        } catch {
            finish(span, status: (error as? any HTTPResponseError)?.status.code ?? 500)
            throw error
        }
    }

    private func finish(_ span: any Span, status: Int) {
        span.attributes["http.response.status_code"] = status
        if status >= 500 { span.setStatus(.init(code: .error)) }
    }
}
