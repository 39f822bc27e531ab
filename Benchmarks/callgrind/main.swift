import SessionPolicy

// A fixed evaluation loop for callgrind (run.sh): a KOBIL-like policy built in code, one resumable
// session, N evaluations of the launch chain that ends in `allow` (the longest, the default), or
// with a second argument `background`, of `background` in an active session (the shortest chain:
// the fixed cost of one evaluation).
var p = Policy(name: "cg")
p.session.max = .days(90)
p.offline.window = .days(30)
p.authModes.offline = [.unprotected, .biometric]
p.device.singleUser = true
p.device.bindSession = true
let compiled = try! CompiledPolicy(p)
let t0 = Timestamp(secondsSinceEpoch: 1_772_355_600)
var state = SessionState()
let background = CommandLine.arguments.dropFirst(2).contains("background")
let inPlace = CommandLine.arguments.dropFirst(2).contains("in-place")
state.state = background ? .active : .suspended
state.user = "alice"
state.device = "phone-1"
state.authMode = .unprotected
state.lastIdPLogin = t0
state.lastOnline = t0
state.lastActivity = t0
state.highestTime = t0
let event = Event(
    background ? .background : .launch, at: Timestamp(secondsSinceEpoch: 1_772_355_600 + 86_400), network: .offline, user: "alice",
    device: .init(id: "phone-1", keystore: .hardware, integrity: .ok))
let n = Int(CommandLine.arguments.dropFirst().first ?? "100000") ?? 100_000

/// The loop, in a function over locals: the policy and the state are not globals the loop
/// would copy on every call.
@inline(never) func run(_ compiled: CompiledPolicy, _ state: SessionState, _ event: Event, _ n: Int, inPlace: Bool) -> Int {
    var allows = 0
    if inPlace {
        for _ in 0..<n {
            var s = state
            let v = compiled.evaluate(&s, event)
            if v.decision == .allow { allows += 1 }
        }
    } else {
        for _ in 0..<n {
            let o = compiled.evaluate(state, event)
            if o.decision == .allow { allows += 1 }
        }
    }
    return allows
}
print("allows \(run(compiled, state, event, n, inPlace: inPlace)) of \(n)")
