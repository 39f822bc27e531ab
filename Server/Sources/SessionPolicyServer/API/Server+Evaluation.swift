import Foundation
import Hummingbird
import NIOCore
import SessionPolicy

/// Stateless evaluation: the caller keeps the state.
extension Server {
    /// `POST /v1/policies/{policy}/evaluate`: `{state?, event}` -> the evaluation report.
    /// `?explain=true` adds the deciding transition and every guard tried.
    func evaluate(_ request: Request, _ context: ServerRequestContext) async throws -> Response {
        let policy = try policy(context)
        let body = try await RequestBody.collect(request, limit: configuration.maxBodyBytes)
        let explain = request.uri.queryParameters["explain"] == "true"
        // The fast reader takes the common, well-formed body; anything else goes through the
        // located reader, which gives the same values or the CLI's diagnostics.
        if !explain, let input = body.withUnsafeReadableBytes({ FastJSON.evaluationRequest($0) }) {
            let outcome = policy.evaluate(input.state, input.event)
            metrics.decided(policy: policy.name, outcome)
            var out: [UInt8] = []
            out.reserveCapacity(1024)
            out.append(contentsOf: #"{"outcome":"#.utf8)
            FastJSON.append(outcome, to: &out)
            out.append(contentsOf: #","policy":"#.utf8)
            out.append(contentsOf: Self.jsonString(policy.name))
            out.append(UInt8(ascii: "}"))
            return Self.bytes(out)
        }
        let (state, event) = try RequestBody.read(body) { r, node in r.evaluationInput(node, path: "") }
        if explain {
            let (outcome, trace) = policy.explain(state, event)
            metrics.decided(policy: policy.name, outcome)
            return Self.json(EvaluationReport(policy: policy, outcome: outcome, decidedBy: true, trace: trace))
        }
        let outcome = policy.evaluate(state, event)
        metrics.decided(policy: policy.name, outcome)
        return Self.json(EvaluationReport(policy: policy, outcome: outcome, decidedBy: false))
    }

    /// `POST /v1/policies/{policy}/evaluate/batch`: `{items: [{state?, event}, ...]}` ->
    /// `{policy, results: [outcome, ...]}`, in the items' order.
    func evaluateBatch(_ request: Request, _ context: ServerRequestContext) async throws -> Response {
        let policy = try policy(context)
        let body = try await RequestBody.collect(request, limit: configuration.maxBatchBytes)
        let limit = configuration.maxBatchItems
        // Both readers take the batch's own bounds: its byte limit, and a node budget that
        // follows the item limit.
        let limits = InputLimits.batch(bytes: configuration.maxBatchBytes, items: limit)
        let items =
            try body.withUnsafeReadableBytes({ FastJSON.batchRequest($0, limits: limits) }).map {
                $0.map { (state: $0.state, event: $0.event) }
            }
            ?? RequestBody.read(body, limits: limits) { r, node in r.evaluationBatch(node, limit: limit) }
        guard items.count <= limit else {
            throw APIError.badRequest([
                .error(.inputTooLarge, "the batch has \(items.count) items, more than the limit of \(limit)", at: nil, help: "split it")
            ])
        }
        var outcomes: [Outcome] = []
        outcomes.reserveCapacity(items.count)
        var counts: [Int: (Outcome, Int)] = [:]
        for (state, event) in items {
            let outcome = policy.evaluate(state, event)
            outcomes.append(outcome)
            counts[outcome.transition, default: (outcome, 0)].1 += 1
        }
        for (outcome, n) in counts.values { metrics.decided(policy: policy.name, outcome, count: n) }
        // `{"policy":...,"results":[...]}`: the keys in JSONEncoder's sorted order.
        var out: [UInt8] = Array(#"{"policy":"#.utf8)
        out.append(contentsOf: Self.jsonString(policy.name))
        out.append(UInt8(ascii: ","))
        out.append(contentsOf: FastJSON.batchResponse(outcomes).dropFirst())
        return Self.bytes(out)
    }
}
