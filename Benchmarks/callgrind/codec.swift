import SessionPolicy

// A fixed codec loop for callgrind (run.sh codec): one evaluation request read by the fast
// reader, evaluated, and its outcome written by the fast writer, N times.
let body = Array(
    #"""
    {"state":{"state":"suspended","user":"alice","device":"phone-1","auth_mode":"none","last_idp_login":"2026-03-01T09:00:00Z","last_online":"2026-03-01T09:00:00Z","last_activity":"2026-03-01T09:00:00Z","highest_time":"2026-03-01T09:00:00Z","failures":{"biometric":0,"offline_login":1,"idp_login":0},"read_only":false,"biometric_locked":false},"event":{"type":"launch","time":"2026-03-02T09:00:00Z","network":"offline","user":"alice","device":{"id":"phone-1","keystore":"hardware","integrity":"ok"}}}
    """#.utf8)
var p = Policy(name: "cg")
p.session.max = .days(90)
p.offline.window = .days(30)
p.authModes.offline = [.unprotected, .biometric]
let compiled = try! CompiledPolicy(p)
let n = Int(CommandLine.arguments.dropFirst().first ?? "100000") ?? 100_000
var bytes = 0
var out: [UInt8] = []
out.reserveCapacity(4096)
for _ in 0..<n {
    guard let request = FastJSON.evaluationRequest(body) else { fatalError("the fast reader refused the request") }
    let o = compiled.evaluate(request.state, request.event)
    out.removeAll(keepingCapacity: true)
    FastJSON.append(o, to: &out)
    bytes += out.count
}
print("bytes \(bytes) of \(n)")
