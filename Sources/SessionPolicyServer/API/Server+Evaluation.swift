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
        let (state, event) = try RequestBody.read(body) { r, node in r.evaluationInput(node, path: "") }
        if request.uri.queryParameters["explain"] == "true" {
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
        let items = try RequestBody.read(body) { r, node in r.evaluationBatch(node, limit: limit) }
        var outcomes: [Outcome] = []
        outcomes.reserveCapacity(items.count)
        var counts: [Int: (Outcome, Int)] = [:]
        for (state, event) in items {
            let outcome = policy.evaluate(state, event)
            outcomes.append(outcome)
            counts[outcome.transition, default: (outcome, 0)].1 += 1
        }
        for (outcome, n) in counts.values { metrics.decided(policy: policy.name, outcome, count: n) }
        return Self.json(BatchReport(policy: policy.name, results: outcomes))
    }
}

/// What the batch endpoint returns.
struct BatchReport: Encodable {
    var policy: String
    var results: [Outcome]
}
