// An embedding example: a server of one's own that uses the evaluator library directly, not
// over HTTP. It compiles one policy at start and keeps each user's session state in memory
// (a real service would keep it in its own database). Build and run:
//
//   swift run --package-path Server embedding-server policies/spendiq.yaml 8081   # from the repository root
//   curl -X POST localhost:8081/attempt -d '{"user":"alice","device":"d1",
//     "event":{"type":"launch","time":"2026-03-01T09:00:00Z","network":"online"}}'
//
// The server decides with the same compiled policy the app embeds, so both agree.
import Foundation
import Hummingbird
import SessionPolicy
import SessionPolicyYAML

/// Session states by user and device. An actor serializes the events of every session.
actor Sessions {
    private var states: [String: SessionState] = [:]

    /// Evaluates `event` against the stored state and stores the new one.
    func apply(_ event: Event, user: String, device: String, policy: CompiledPolicy) -> Outcome {
        let key = "\(user)/\(device)"
        let outcome = policy.evaluate(states[key] ?? SessionState(user: user, device: device), event)
        states[key] = outcome.state
        return outcome
    }
}

/// What a client sends: whose session, and the event.
struct Attempt: Decodable {
    var user: String
    var device: String
    var event: Event
}

/// What the server answers: the decision, why, and what to tell the user.
struct Answer: ResponseEncodable {
    var decision: String
    var reason: String
    var message: String
}

let arguments = CommandLine.arguments
let path = arguments.count > 1 ? arguments[1] : "policies/spendiq.yaml"
let port = arguments.count > 2 ? Int(arguments[2]) ?? 8081 : 8081

// Compile once; a policy that does not compile stops the server with located diagnostics.
let policy: CompiledPolicy
switch PolicyFile.load(path) {
case let .success(loaded):
    policy = loaded.compiled
case let .failure(error):
    FileHandle.standardError.write(Data((DiagnosticRenderer().render(error.diagnostics) + "\n").utf8))
    exit(2)
}

let sessions = Sessions()
let router = Router()
router.post("attempt") { request, context -> Answer in
    let attempt = try await request.decode(as: Attempt.self, context: context)
    let outcome = await sessions.apply(attempt.event, user: attempt.user, device: attempt.device, policy: policy)
    return Answer(decision: outcome.decision?.rawValue ?? "none", reason: outcome.reason.rawValue, message: outcome.message)
}
let app = Application(router: router, configuration: .init(address: .hostname("127.0.0.1", port: port)))
try await app.runService()
