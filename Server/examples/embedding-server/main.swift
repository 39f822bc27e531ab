// An embedding example: a server of one's own that uses the evaluator library directly, not
// over HTTP. It compiles one policy at start and keeps each user's session state in memory
// (a real service would keep it in its own database). Build and run:
//
//   swift run --package-path Server embedding-server policies/spendiq.yaml 8081   # from the repository root
//   curl -X POST localhost:8081/attempt/alice/d1 \
//     -d '{"type":"launch","time":"2026-03-01T09:00:00Z","network":"online"}'
//
// The server decides with the same compiled policy the app embeds, so both agree. The event is
// read with `Event(json:)`, the library's strict reader: a malformed or unknown event is a 400
// with located diagnostics, the same ones `policyctl eval` prints.
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

/// What the server answers: the decision, why, and what to tell the user.
struct Answer: ResponseEncodable {
    var decision: String
    var reason: String
    var message: String
}

/// A refused request: 400 with the diagnostics as JSON (`{"diagnostics": [...]}`).
struct BadRequest: HTTPResponseError {
    var diagnostics: [Diagnostic]
    var status: HTTPResponse.Status { .badRequest }

    func response(from request: Request, context: some RequestContext) throws -> Response {
        Response(
            status: status, headers: [.contentType: "application/json"],
            body: .init(byteBuffer: ByteBuffer(string: DiagnosticRenderer.json(diagnostics) + "\n")))
    }
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
router.post("attempt/:user/:device") { request, context -> Answer in
    let user = try context.parameters.require("user")
    let device = try context.parameters.require("device")
    let body = try await request.body.collect(upTo: 64 << 10)
    let event: Event
    do throws(DiagnosticError) {
        event = try Event(json: Data(buffer: body), file: "body")
    } catch {
        throw BadRequest(diagnostics: error.diagnostics)
    }
    let outcome = await sessions.apply(event, user: user, device: device, policy: policy)
    return Answer(decision: outcome.decision?.rawValue ?? "none", reason: outcome.reason.rawValue, message: outcome.message)
}
let app = Application(router: router, configuration: .init(address: .hostname("127.0.0.1", port: port)))
try await app.runService()
