import Hummingbird
import NIOCore
import SessionPolicy

/// Reads bytes as the body of every route that takes one, the way the server does, and says
/// what contradicts the readers' contract: for the fuzz target of request bodies (`Fuzz/`) and
/// its regression tests. A testing aid, public for the fuzz package: not for serving requests.
public enum RequestBodyCheck {
    /// The problems found reading `bytes` as each request body shape (empty when none):
    /// - the fast reader's value differs from the located reader's (`FastJSON`'s promise: the
    ///   same value or a fall-back);
    /// - a refusal that is not a 400 with at least one error, or a diagnostic without a place
    ///   (`body:LINE:COLUMN`), a message or, for an error, a code.
    public static func problems(_ bytes: [UInt8], user: String = "alice", limits: RequestLimits = RequestLimits()) -> [String] {
        let parameters: Parameters = ["user": Substring(user)]
        let body = ByteBuffer(bytes: bytes)
        var out: [String] = []
        func check<S: RequestBody>(_ shape: S.Type, same: (S, S) -> Bool) {
            let fast = body.withUnsafeReadableBytes { S.fast($0, limits: limits) }
            let located = Result { () throws(APIError) -> S in
                try StrictRequestDecoder.located(S.self, body, limits: limits, parameters: parameters)
            }
            switch (fast, located) {
            case let (fast?, .success(value)):
                if !same(fast, value) { out.append("\(S.self): the fast reader read another value than the located reader") }
            case let (_?, .failure(error)):
                out.append("\(S.self): the fast reader read a value the located reader refuses: \(error.diagnostics)")
            case let (nil, .failure(error)):
                out += refusalProblems(error, shape: "\(S.self)")
            case (nil, .success):
                break
            }
        }
        check(EvaluationRequest.self) { $0.state == $1.state && $0.event == $1.event }
        check(BatchRequest.self) { a, b in
            a.items.count == b.items.count
                && zip(a.items, b.items).allSatisfy { x, y in
                    switch (x, y) {
                    case let (.success(x), .success(y)): x.state == y.state && x.event == y.event
                    case let (.failure(x), .failure(y)): x.diagnostics == y.diagnostics
                    default: false
                    }
                }
        }
        // The located reader gives an event without `user` the path's user (so an
        // `idp_login_succeeded` may leave it out); the fast one leaves it out, and the route
        // sets the path's user on every event either way.
        check(EventRequest.self) { fast, located in
            var event = fast.event
            if event.user == nil { event.user = user }
            return event == located.event
        }
        check(NamesRequest<CreationKeys>.self) { $0.names == $1.names }
        check(NamesRequest<DetectionKeys>.self) { $0.names == $1.names }
        check(NamesRequest<ExchangeKeys>.self) { $0.names == $1.names }
        // A batch's refused items are diagnostics too.
        if case let .success(batch) = Result(catching: { () throws(APIError) -> BatchRequest in
            try StrictRequestDecoder.body(BatchRequest.self, body, limits: limits, parameters: parameters)
        }) {
            for case let .failure(error) in batch.items {
                out += refusalProblems(APIError(.badRequest, error.diagnostics), shape: "BatchRequest item")
            }
        }
        return out
    }

    private static func refusalProblems(_ error: APIError, shape: String) -> [String] {
        var out: [String] = []
        if error.status != .badRequest { out.append("\(shape): refused with \(error.status.code), not 400") }
        if !error.diagnostics.hasErrors { out.append("\(shape): refused without an error") }
        for d in error.diagnostics {
            if d.location == nil { out.append("\(shape): `\(d.code)` has no place: \(d.message)") }
            if d.message.isEmpty { out.append("\(shape): `\(d.code)` has no message") }
            if d.code.rawValue.isEmpty { out.append("\(shape): a diagnostic without a code: \(d.message)") }
        }
        return out
    }
}
