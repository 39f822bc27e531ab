import Foundation
import FuzzShared
import SessionPolicy
import SessionPolicyJSON

/// The JSON readers of session states and events that `policyctl eval` and the server use, on
/// the same bytes read as a state, an event and an evaluation input (`{"state", "event"}`):
/// the fast reader reads what the located reader reads or falls back; a refusal is located;
/// an input that reads is decided by a shipped policy, with the same outcome returned, in
/// place and explained, and a next state that is written and read back unchanged.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = UnsafeRawBufferPointer(start: data, count: size)
    let text = String(decoding: bytes, as: UTF8.self)
    _ = read(bytes, text, FastJSON.sessionState) { b, file throws(DiagnosticError) in try StrictJSON.sessionState(b, file: file) }
    _ = read(bytes, text, FastJSON.event) { b, file throws(DiagnosticError) in try StrictJSON.event(b, file: file) }
    let request = read(bytes, text, { FastJSON.evaluationRequest($0).map(Input.init) }) { b, file throws(DiagnosticError) in
        Input(try StrictJSON.evaluationRequest(b, file: file))
    }
    guard let state = request?.state, let event = request?.event else { return 0 }
    // One shipped policy per input (which one follows from its bytes), so that an execution
    // stays cheap: the corpus reaches every policy.
    do {
        let policy = FuzzOracle.machines[Int(text.utf8.reduce(0) { $0 &+ UInt($1) } % UInt(FuzzOracle.machines.count))]
        let outcome = policy.evaluate(state, event)
        var inPlace = state
        let verdict = policy.evaluate(&inPlace, event)
        if Outcome(verdict, state: inPlace) != outcome { FuzzOracle.fail("\(policy.name): in place and returned outcomes differ") }
        if policy.explain(state, event).0 != outcome { FuzzOracle.fail("\(policy.name): the explained outcome differs") }
        var written: [UInt8] = []
        FastJSON.append(outcome.state, to: &written)
        do {
            let back = try SessionState(json: Data(written))
            if back != outcome.state { FuzzOracle.fail("\(policy.name): the next state reads back as another state") }
        } catch {
            FuzzOracle.fail("\(policy.name): the next state it wrote is refused: \(error.diagnostics)")
        }
        var outcomeBytes: [UInt8] = []
        FastJSON.append(outcome, to: &outcomeBytes)
    }
    return 0
}

/// An evaluation input, comparable.
struct Input: Equatable {
    var state: SessionState
    var event: Event
    init(_ pair: (state: SessionState, event: Event)) { (state, event) = pair }
}

/// `bytes` read by the fast reader `fast` and by the located reader `located`: they agree, or
/// the fast one falls back; the located reader's refusal is located.
func read<T: Equatable>(
    _ bytes: UnsafeRawBufferPointer, _ text: String, _ fast: (UnsafeRawBufferPointer) -> T?,
    _ located: (UnsafeRawBufferPointer, String) throws(DiagnosticError) -> T
) -> T? {
    let file = "input.json"
    let quick = fast(bytes)
    let result = Result { () throws(DiagnosticError) -> T in try located(bytes, file) }
    switch (quick, result) {
    case let (quick?, .success(value)):
        if quick != value { FuzzOracle.fail("the fast reader read another \(T.self) than the located reader") }
        return value
    case let (_?, .failure(error)):
        FuzzOracle.fail("the fast reader read a \(T.self) the located reader refuses: \(error.diagnostics)")
    case let (nil, .failure(error)):
        FuzzOracle.checkRefusal(error.diagnostics, file: file, text: text)
        return nil
    case let (nil, .success(value)):
        return value
    }
}
