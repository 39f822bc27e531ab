import Foundation
import Hummingbird
import NIOCore
import SessionPolicy

/// Reading JSON request bodies: bounded, then the core's strict JSON reader (`JSONSyntax`), the
/// one the CLI uses for JSON input, so a mistake gets the CLI's diagnostic (`body:LINE:COLUMN`,
/// message, help).
enum RequestBody {
    /// The file name diagnostics give a request body.
    static let file = "body"

    /// Collects at most `limit` bytes. A larger body is a 413: at once when its `Content-Length`
    /// says so (nothing is read), otherwise as soon as the bytes received pass the limit.
    static func collect(_ request: Request, limit: Int) async throws -> ByteBuffer {
        if let declared = request.headers[.contentLength], let length = Int(declared), length > limit {
            throw APIError.bodyTooLarge("the request body is \(length) bytes, more than the limit of \(limit) bytes")
        }
        var request = request
        return try await request.collectBody(upTo: limit)
    }

    /// The located syntax of a JSON body within `limits`; anything else is a 400 with diagnostics.
    static func syntax(_ buffer: ByteBuffer, limits: InputLimits = .files) throws(APIError) -> SyntaxNode {
        switch buffer.withUnsafeReadableBytes({ JSONSyntax.parse($0, file: file, limits: limits) }) {
        case let .failure(e):
            throw .badRequest(e.diagnostics)
        case .success(nil):
            throw .badRequest([
                .error(
                    .invalidJSON, "the body is empty", at: SourceLocation(file: file, line: 1, column: 1),
                    help: "send one JSON object (`Content-Type: application/json`)")
            ])
        case let .success(node?):
            return node
        }
    }

    /// Reads a body with `read`, turning its diagnostics into a 400.
    static func read<T>(
        _ buffer: ByteBuffer, limits: InputLimits = .files, _ read: (inout SyntaxReader, SyntaxNode) -> T?
    ) throws(APIError) -> T {
        let node = try syntax(buffer, limits: limits)
        var reader = SyntaxReader()
        let value = read(&reader, node)
        if reader.diagnostics.hasErrors || value == nil {
            var diagnostics = reader.diagnostics
            if diagnostics.isEmpty {
                diagnostics.append(.error(.invalidValue, "the body is not a valid request", at: node.location))
            }
            throw .badRequest(diagnostics)
        }
        return value!
    }
}
