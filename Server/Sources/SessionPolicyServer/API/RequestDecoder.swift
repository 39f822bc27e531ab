public import Hummingbird
import NIOCore
import SessionPolicy
import SessionPolicyJSON

/// The request decoder of `ServerRequestContext`: the only way a request body becomes a value.
/// It takes the body within its shape's byte limit (a larger body is a 413 before anything is
/// parsed), tries the shape's fast reader (`FastJSON`), and otherwise reads the body with the
/// strict, located reader of its shape (`StrictJSON`), so a mistake gets the CLI's diagnostics
/// (`body:LINE:COLUMN`, message, help) in a 400.
///
/// It decodes only `RequestBody` shapes; any other `Decodable` is a programming error and
/// refused (500), never read by a lenient decoder.
public struct StrictRequestDecoder: RequestDecoder, Sendable {
    /// The byte and item limits of request bodies (`ServerConfiguration`).
    public var limits: RequestLimits

    public init(limits: RequestLimits = RequestLimits()) { self.limits = limits }

    public func decode<T: Decodable>(_ type: T.Type, from request: Request, context: some RequestContext) async throws -> T {
        guard let shape = type as? any RequestBody.Type else {
            throw APIError(.internalServerError, .requestFailed, "`\(T.self)` is not a request body shape")
        }
        let value = try await read(shape, from: request, parameters: context.parameters)
        guard let value = value as? T else {
            throw APIError(.internalServerError, .requestFailed, "`\(T.self)` read as another type")
        }
        return value
    }

    private func read<S: RequestBody>(_ shape: S.Type, from request: Request, parameters: Parameters) async throws -> S {
        let limit = S.byteLimit(limits)
        if let declared = request.headers[.contentLength], let length = Int(declared), length > limit {
            throw APIError.bodyTooLarge("the request body is \(length) bytes, more than the limit of \(limit) bytes")
        }
        var request = request
        return try Self.body(shape, try await request.collectBody(upTo: limit), limits: limits, parameters: parameters)
    }

    /// Reads `body`, already within its shape's byte limit, as `shape`: the fast reader, or the
    /// located reader and its diagnostics (a 400).
    static func body<S: RequestBody>(
        _ shape: S.Type, _ body: ByteBuffer, limits: RequestLimits, parameters: Parameters
    ) throws(APIError) -> S {
        if let value = body.withUnsafeReadableBytes({ S.fast($0, limits: limits) }) { return value }
        return try Self.located(shape, body, limits: limits, parameters: parameters)
    }

    /// The file name diagnostics give a request body.
    static let file = "body"
    /// The help of an empty request body.
    static let help = "send one JSON object (`Content-Type: application/json`)"

    /// Reads `body` with the strict, located reader of `shape`; anything refused is a 400 with
    /// its diagnostics.
    static func located<S: RequestBody>(
        _ shape: S.Type, _ body: ByteBuffer, limits: RequestLimits, parameters: Parameters
    ) throws(APIError) -> S {
        let result = body.withUnsafeReadableBytes { bytes in
            Result { () throws(DiagnosticError) -> S in try S.located(bytes, limits: limits, parameters: parameters) }
        }
        switch result {
        case let .success(value): return value
        case let .failure(error): throw .badRequest(error.diagnostics)
        }
    }
}

/// The limits on request bodies.
public struct RequestLimits: Sendable {
    /// Most bytes of a request body but a batch's.
    public var bodyBytes: Int
    /// Most bytes of a batch request.
    public var batchBytes: Int
    /// Most items in a batch.
    public var batchItems: Int

    /// The limits `configuration` sets (`--max-body`, `--max-batch-body`, `--max-batch-items`).
    public init(_ configuration: ServerConfiguration = ServerConfiguration()) {
        bodyBytes = configuration.maxBodyBytes
        batchBytes = configuration.maxBatchBytes
        batchItems = configuration.maxBatchItems
    }
}

/// The shape of a request body, read only by `StrictRequestDecoder`. Its `Decodable`
/// conformance exists so Hummingbird's `request.decode(as:context:)` reaches that decoder; any
/// other decoder is refused, so no body is ever read by a lenient decoder.
protocol RequestBody: Decodable, Sendable {
    /// The most bytes a body of this shape may have.
    static func byteLimit(_ limits: RequestLimits) -> Int
    /// The fast reader: exactly the value the located reader reads from `bytes`, or nil to
    /// fall back to it (see `FastJSON`).
    static func fast(_ bytes: UnsafeRawBufferPointer, limits: RequestLimits) -> Self?
    /// The located reader (`StrictJSON`): the value, or its problems as diagnostics.
    static func located(
        _ bytes: UnsafeRawBufferPointer, limits: RequestLimits, parameters: Parameters
    ) throws(DiagnosticError) -> Self
}

extension RequestBody {
    static func byteLimit(_ limits: RequestLimits) -> Int { limits.bodyBytes }
    static func fast(_ bytes: UnsafeRawBufferPointer, limits: RequestLimits) -> Self? { nil }

    init(from decoder: any Decoder) throws {
        throw DecodingError.dataCorrupted(
            .init(codingPath: [], debugDescription: "\(Self.self) is read only by the server's StrictRequestDecoder"))
    }
}
