import Foundation
import FuzzShared
import SessionPolicy
import SessionPolicyDelivery

/// The conformance set's pinned public keys (`spec/conformance/keys/*.pub.pem`), as text: an
/// envelope is checked against them, as an app checks a delivered machine against the keys it
/// pins. Read into `TrustedKey`s per execution: a global array of them is reported as a leak
/// (LeakSanitizer does not follow the tagged pointers of their `Data`).
let pinnedPEMs: [String] = ["a", "b", "c"].map { name in
    let path = FuzzOracle.root + "/spec/conformance/keys/\(name).pub.pem"
    guard let pem = try? String(contentsOfFile: path, encoding: .utf8) else { FuzzOracle.fail("no key at \(path)") }
    return pem
}

func pinned() -> [TrustedKey] {
    pinnedPEMs.map { pem in
        do { return try TrustedKey(pem: pem) } catch { FuzzOracle.fail("a conformance key is refused: \(error)") }
    }
}

/// What an app loads: the bytes as a machine document (`PolicyMachine(document:)`, as the
/// Swift runtime reads a shipped or delivered machine) and as a signed envelope
/// (`EnvelopeReader`, with the conformance keys pinned, any policy, no clock). A refusal is
/// located; a document that reads is written again as the same text, reads back with the same
/// digest and decides an offline and an online launch as it did; so does the machine of an
/// envelope that verifies.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Data(bytes: data, count: size)
    let text = String(decoding: bytes, as: UTF8.self)
    // A mutated document almost always fails its digest, which is checked before the rest: read
    // it again with the digest its content has, so that the checks after the digest are fuzzed.
    if let diagnostics = document(bytes, text), diagnostics.first?.code == .digestMismatch,
        let fixed = withContentDigest(text, diagnostics[0].message)
    {
        document(Data(fixed.utf8), fixed)
    }
    switch EnvelopeReader.read(bytes, keys: pinned(), policy: nil, now: nil, toleranceMilliseconds: 0, file: "fuzz.envelope") {
    case let .success(signed): roundTrip(signed.machine)
    // The machine inside an envelope is placed in the envelope or in the machine it carries.
    case let .failure(error): FuzzOracle.checkRefusal(error.diagnostics, file: nil, text: nil)
    }
    return 0
}

/// Reads `bytes` as a machine document: a refusal is located (and returned), a machine
/// round-trips.
@discardableResult func document(_ bytes: Data, _ text: String) -> [Diagnostic]? {
    do {
        roundTrip(try PolicyMachine(document: bytes, file: "fuzz.machine.json"))
        return nil
    } catch {
        FuzzOracle.checkRefusal(error.diagnostics, file: "fuzz.machine.json", text: text)
        return error.diagnostics
    }
}

/// `text` with the digest a `digest-mismatch` message names as the content's in place of the
/// one it names as written ("the document's digest is `GIVEN`, its content's `FOUND`").
func withContentDigest(_ text: String, _ message: String) -> String? {
    let parts = message.split(separator: "`", omittingEmptySubsequences: false)
    guard parts.count == 5 else { FuzzOracle.fail("a digest mismatch that does not name both digests: \(message)") }
    let (given, found) = (String(parts[1]), String(parts[3]))
    guard text.contains("\"\(given)\"") else { return nil }
    return text.replacingOccurrences(of: "\"\(given)\"", with: "\"\(found)\"")
}

/// A machine that reads writes its document again, which reads back to the same text and
/// digest and decides a launch alike.
func roundTrip(_ machine: PolicyMachine) {
    let document = machine.document
    let again: PolicyMachine
    do {
        again = try PolicyMachine(document: Data(document.utf8), file: "again.machine.json")
    } catch {
        FuzzOracle.fail("the document a machine writes is refused: \(error.diagnostics)")
    }
    if again.document != document { FuzzOracle.fail("the written document does not read back to its own text") }
    if again.digest != machine.digest { FuzzOracle.fail("the written document has another digest") }
    let t = Timestamp(millisecondsSinceEpoch: 1_772_355_600_000)
    for event in [Event(.launch, at: t, network: .offline, user: "alice"), Event(.launch, at: t, network: .online, user: "alice")] {
        if machine.evaluate(SessionState(), event) != again.evaluate(SessionState(), event) {
            FuzzOracle.fail("the machine and its written document decide \(event) differently")
        }
    }
}
