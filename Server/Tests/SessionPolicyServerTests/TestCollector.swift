import Foundation
import SessionPolicyTestSupport

/// The test OpenTelemetry collector (`Server/Tests/Collector/otlp_receiver.py`, on
/// opentelemetry-proto from PyPI) as a process on loopback: it decodes each OTLP/HTTP export
/// with the OpenTelemetry protobuf definitions and keeps every span it received.
final class TestCollector: Sendable {
    /// The collector's base URL, for `tracing.otlp.endpoint`.
    let endpoint: String
    private let process: Process
    private let stdin: Pipe
    private let directory: URL
    private var spansFile: URL { directory.appendingPathComponent("spans.jsonl") }

    struct StartFailed: Error, CustomStringConvertible {
        var description: String
    }

    /// A span as the collector decoded it.
    struct Span: Sendable, Decodable {
        var traceID: String
        var spanID: String
        var parentSpanID: String
        var name: String
        var kind: String
        var attributes: [String: String]
        /// 2 is an error (OpenTelemetry's `STATUS_CODE_ERROR`).
        var status: Int
        var resource: [String: String]

        enum CodingKeys: String, CodingKey {
            case traceID = "trace_id", spanID = "span_id", parentSpanID = "parent_span_id", name, kind, attributes, status, resource
        }
    }

    /// A line of the collector's file: a span, or an export that did not decode.
    private struct Line: Decodable {
        var error: String?
    }

    init() async throws {
        directory = try Fixtures.temporaryDirectory("collector")
        let helper = try await PythonHelper([
            Fixtures.path("Server/Tests/Collector/otlp_receiver.py"), "--port", "0", "--out",
            directory.appendingPathComponent("spans.jsonl").path,
        ])
        guard helper.firstLine.hasPrefix("listening on ") else {
            throw StartFailed(
                description: "the test collector did not start (`\(helper.python)` needs opentelemetry-proto: pip install "
                    + "opentelemetry-proto): \(helper.firstLine) \(helper.stopReadingErrors())")
        }
        endpoint = String(helper.firstLine.dropFirst("listening on ".count))
        process = helper.process
        stdin = helper.stdin
    }

    func stop() {
        try? stdin.fileHandleForWriting.close()
        process.terminate()
        process.waitUntilExit()
        try? FileManager.default.removeItem(at: directory)
    }

    /// Runs `body` with a collector, stopped afterwards.
    static func with<T>(_ body: (TestCollector) async throws -> T) async throws -> T {
        let collector = try await TestCollector()
        defer { collector.stop() }
        return try await body(collector)
    }

    /// Every span received so far, and every export that did not decode.
    func received() -> (spans: [Span], errors: [String]) {
        guard let text = try? String(contentsOf: spansFile, encoding: .utf8) else { return ([], []) }
        var spans: [Span] = []
        var errors: [String] = []
        let decoder = JSONDecoder()
        for line in text.split(separator: "\n") {
            if let error = (try? decoder.decode(Line.self, from: Data(line.utf8)))?.error {
                errors.append(error)
            } else if let span = try? decoder.decode(Span.self, from: Data(line.utf8)) {
                spans.append(span)
            }
        }
        return (spans, errors)
    }

    /// The first span named `name` (of trace `trace`, when given), once it has arrived (an error
    /// after 20 s).
    func span(named name: String, trace: String? = nil) async throws -> Span {
        for _ in 0..<200 {
            for span in received().spans where span.name == name && (trace == nil || span.traceID == trace) { return span }
            try await Task.sleep(for: .milliseconds(100))
        }
        throw StartFailed(description: "no span named `\(name)` arrived in 20 s; received: \(received().spans.map(\.name))")
    }

    /// The spans of `traceID`, once `count` of them have arrived (or all there are after 20 s).
    func spans(of traceID: String, atLeast count: Int) async throws -> [Span] {
        var found: [Span] = []
        for _ in 0..<200 {
            found = received().spans.filter { $0.traceID == traceID }
            if found.count >= count { break }
            try await Task.sleep(for: .milliseconds(100))
        }
        return found
    }
}
