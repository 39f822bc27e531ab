import Hummingbird
import SessionPolicy

/// Stateless evaluation: the caller keeps the state.
extension Server {
    /// `POST /v1/policies/{policy}/evaluate`: `{state?, event}` -> the evaluation report.
    /// `?explain=true` adds the deciding transition and every guard tried.
    func evaluate(_ request: Request, _ context: ServerRequestContext) async throws -> EvaluationResponse {
        let policy = try policy(context)
        let input = try await request.decode(as: EvaluationRequest.self, context: context)
        if request.uri.queryParameters["explain"] == "true" {
            let (outcome, trace) = policy.explain(input.state, input.event)
            metrics.decided(policy: policy.name, outcome)
            return EvaluationResponse(report: EvaluationReport(policy: policy, outcome: outcome, decidedBy: true, trace: trace))
        }
        let outcome = await RequestTracing.span("evaluate") { span in
            let outcome = policy.evaluate(input.state, input.event)
            RequestTracing.decided(span, policy: policy.name, digest: policies.entry(named: policy.name)?.digest, outcome)
            return outcome
        }
        metrics.decided(policy: policy.name, outcome)
        return EvaluationResponse(report: EvaluationReport(policy: policy, outcome: outcome, decidedBy: false))
    }

    /// `POST /v1/policies/{policy}/evaluate/batch`: `{items: [{state?, event}, ...]}` ->
    /// `{policy, results: [outcome, ...]}`, in the items' order.
    func evaluateBatch(_ request: Request, _ context: ServerRequestContext) async throws -> BatchResponse {
        let policy = try policy(context)
        let items = try await request.decode(as: BatchRequest.self, context: context).items
        var results: [Result<Outcome, DiagnosticError>] = []
        results.reserveCapacity(items.count)
        var counts: [Int: (Outcome, Int)] = [:]
        for item in items {
            results.append(
                item.map { state, event in
                    let outcome = policy.evaluate(state, event)
                    counts[outcome.transition, default: (outcome, 0)].1 += 1
                    return outcome
                })
        }
        for (outcome, n) in counts.values { metrics.decided(policy: policy.name, outcome, count: n) }
        return BatchResponse(policy: policy.name, results: results)
    }
}
