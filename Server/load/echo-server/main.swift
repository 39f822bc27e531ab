// The load scripts' yardstick: a trivial Hummingbird JSON echo handler, measured in the same
// run as the SessionPolicy server so its figures have something to be compared with.
//
//   swift build -c release --package-path Server --product echo-server && Server/.build/release/echo-server 8090
import Hummingbird

let port = CommandLine.arguments.count > 1 ? Int(CommandLine.arguments[1]) ?? 8090 : 8090
let router = Router()
router.post("echo") { request, _ -> Response in
    var request = request
    let body = try await request.collectBody(upTo: 1 << 20)
    return Response(status: .ok, headers: [.contentType: "application/json"], body: .init(byteBuffer: body))
}
let app = Application(router: router, configuration: .init(address: .hostname("127.0.0.1", port: port)))
try await app.runService()
