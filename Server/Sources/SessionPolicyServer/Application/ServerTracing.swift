import Logging
import OTel
import ServiceLifecycle
import SessionPolicy

/// The OpenTelemetry tracing backend of `tracing.otlp.endpoint`: swift-otel's tracer and its
/// batching OTLP/HTTP exporter (protobuf), made for this server alone (the process-wide
/// `InstrumentationSystem` is left to the embedder). The standard `OTEL_*` environment variables
/// (sampler, headers, timeouts, a traces endpoint of its own) override what is set here.
enum ServerTracing {
    /// The tracer, and the service that exports its spans (it runs in the server's service group
    /// and sends what is left at shutdown).
    static func backend(
        endpoint: String, exportDelay: Duration, logger: Logger
    ) throws -> (tracer: any SpanStarter, service: any Service) {
        var otel = OTel.Configuration.default
        otel.serviceName = "sessionpolicy"
        otel.resourceAttributes = ["service.version": SessionPolicyRelease.version]
        otel.diagnosticLogger = .custom(logger)
        otel.diagnosticLogLevel = .warning
        otel.metrics.enabled = false
        otel.logs.enabled = false
        otel.traces.enabled = true
        otel.traces.batchSpanProcessor.scheduleDelay = exportDelay
        otel.traces.otlpExporter.protocol = .httpProtobuf
        otel.traces.otlpExporter.endpoint = endpoint.hasSuffix("/") ? endpoint + "v1/traces" : endpoint + "/v1/traces"
        let backend = try OTel.makeTracingBackend(configuration: otel)
        return (TracerSpans(tracer: backend.factory), backend.service)
    }
}
