import FuzzShared
import SessionPolicyServer

/// The server's request bodies: the bytes read as the body of every route that takes one
/// (evaluate, batch, a session's event, the device-session routes), as `policyctl serve` reads
/// them: the fast reader agrees with the located one or falls back; a refusal is a 400 with
/// located diagnostics (`RequestBodyCheck`).
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let problems = RequestBodyCheck.problems(Array(UnsafeBufferPointer(start: data, count: size)))
    if !problems.isEmpty { FuzzOracle.fail(problems.joined(separator: "\n")) }
    return 0
}
