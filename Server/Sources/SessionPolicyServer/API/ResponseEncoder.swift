import Foundation
public import Hummingbird
import NIOCore
import SessionPolicy
import SessionPolicyJSON

/// The response encoder of `ServerRequestContext`: every value a handler returns is written
/// as JSON with sorted keys and unescaped slashes (`JSONEncoder` with `.sortedKeys` and
/// `.withoutEscapingSlashes`), one line, `Content-Type: application/json`. A value that has
/// a fast writer (`FastResponse`) is written by it, to the same bytes.
public struct ServerResponseEncoder: ResponseEncoder, Sendable {
    public init() {}

    public func encode(_ value: some Encodable, from request: Request, context: some RequestContext) throws -> Response {
        if let fast = value as? any FastResponse, let bytes = fast.fastJSON() { return Self.response(bytes) }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return Self.response(try encoder.encode(value))
    }

    /// A JSON response of encoded bytes and a newline.
    static func response(_ bytes: some Collection<UInt8>) -> Response {
        var buffer = ByteBuffer()
        buffer.reserveCapacity(bytes.count + 1)
        buffer.writeBytes(bytes)
        buffer.writeString("\n")
        return Response(status: .ok, headers: [.contentType: "application/json"], body: .init(byteBuffer: buffer))
    }

    /// `text` as a JSON string, as `JSONEncoder` writes it.
    static func jsonString(_ text: String) -> [UInt8] {
        let plain = text.utf8.allSatisfy { $0 >= 0x20 && $0 < 0x7F && $0 != UInt8(ascii: "\"") && $0 != UInt8(ascii: "\\") }
        if plain { return [UInt8(ascii: "\"")] + Array(text.utf8) + [UInt8(ascii: "\"")] }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.withoutEscapingSlashes]
        return Array((try? encoder.encode(text)) ?? Data("\"\"".utf8))
    }
}

/// A response value with a fast writer: `fastJSON()` returns exactly the bytes
/// `ServerResponseEncoder` would write through `JSONEncoder` (tests compare the two), or nil to
/// leave the value to `JSONEncoder`.
protocol FastResponse: ResponseEncodable {
    func fastJSON() -> [UInt8]?
}

/// The response of the evaluate route: `EvaluationReport`.
struct EvaluationResponse: FastResponse {
    var report: EvaluationReport

    func encode(to encoder: any Encoder) throws { try report.encode(to: encoder) }

    /// `{"outcome":{...},"policy":"..."}` when the report has no explanation.
    func fastJSON() -> [UInt8]? {
        guard report.decidedBy == nil, report.trace == nil else { return nil }
        var out: [UInt8] = []
        out.reserveCapacity(1024)
        out.append(contentsOf: #"{"outcome":"#.utf8)
        FastJSON.append(report.outcome, to: &out)
        out.append(contentsOf: #","policy":"#.utf8)
        out.append(contentsOf: ServerResponseEncoder.jsonString(report.policy))
        out.append(UInt8(ascii: "}"))
        return out
    }
}

/// The response of the batch route: `{"policy": ..., "results": [...]}`, one result per item in
/// the items' order: the item's outcome, or `{"diagnostics": [...]}` for an item that is not valid.
struct BatchResponse: FastResponse {
    var policy: String
    var results: [Result<Outcome, DiagnosticError>]

    enum CodingKeys: String, CodingKey { case policy, results }

    func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(policy, forKey: .policy)
        var list = c.nestedUnkeyedContainer(forKey: .results)
        for result in results {
            switch result {
            case let .success(outcome): try list.encode(outcome)
            case let .failure(error): try list.encode(["diagnostics": error.diagnostics.sortedForOutput()])
            }
        }
    }

    /// The fast writer takes a batch whose every item has an outcome.
    func fastJSON() -> [UInt8]? {
        var outcomes: [Outcome] = []
        outcomes.reserveCapacity(results.count)
        for result in results {
            guard case let .success(outcome) = result else { return nil }
            outcomes.append(outcome)
        }
        var out: [UInt8] = Array(#"{"policy":"#.utf8)
        out.append(contentsOf: ServerResponseEncoder.jsonString(policy))
        out.append(UInt8(ascii: ","))
        out.append(contentsOf: FastJSON.batchResponse(outcomes).dropFirst())
        return out
    }
}

/// The response of a session event: the decision, the new state's revision, and how many
/// device sessions a wipe or logout ended.
struct SessionEventResponse: FastResponse {
    var deviceSessionsEnded: Int
    var outcome: Outcome
    var policy: String
    /// When the server received the event (its own clock), beside the event's own `time`.
    var receivedAt: Timestamp
    var revision: Int64

    enum CodingKeys: String, CodingKey {
        case outcome, policy, revision
        case deviceSessionsEnded = "device_sessions_ended"
        case receivedAt = "received_at"
    }

    func fastJSON() -> [UInt8]? {
        var out: [UInt8] = Array("{\"device_sessions_ended\":\(deviceSessionsEnded),\"outcome\":".utf8)
        FastJSON.append(outcome, to: &out)
        out.append(contentsOf: #","policy":"#.utf8)
        out.append(contentsOf: ServerResponseEncoder.jsonString(policy))
        out.append(contentsOf: ",\"received_at\":\"\(receivedAt)\",\"revision\":\(revision)}".utf8)
        return out
    }
}
