// The floor to measure against: the hand-written decision loop of ../shared/bench/limit.swift
// (its `swift-enum-call` variant: typed fields, one non-inlined call per decision), run in the
// same process and the same minute as the engine's benchmarks, so the ratio of the two is the
// figure to watch on a noisy machine.

import Benchmark

enum HandWritten {
    enum Network: UInt8 { case online = 0, offline = 1 }
    enum Mode: UInt8 { case none = 0, biometric = 1, password = 2, pin = 3 }
    enum Keystore: UInt8 { case hardware = 0, software = 1 }
    enum Decision: UInt8 { case allowOffline = 0, requireBiometric = 1, idpLogin = 2, wipe = 3 }

    struct Attempt {
        var now: Int64
        var lastIdpLoginAt: Int64
        var lastOnlineAt: Int64
        var network: Network
        var authMode: Mode
        var biometricFailures: Int32
        var deviceKeystore: Keystore
        var accountRevoked: Bool
    }

    static let idpMaxAge: Int64 = 30 * 86_400
    static let offlineMaxAge: Int64 = 7 * 86_400

    /// limit.swift's `decide`, called once per decision.
    @inline(never)
    static func decide(_ a: Attempt) -> Decision {
        if a.accountRevoked { return .wipe }
        if a.now - a.lastIdpLoginAt > idpMaxAge { return .idpLogin }
        if a.network == .offline && a.now - a.lastOnlineAt > offlineMaxAge { return .idpLogin }
        if a.authMode == .password || a.authMode == .pin { return .idpLogin }
        if a.biometricFailures >= 3 { return .idpLogin }
        if a.authMode == .biometric { return .requireBiometric }
        return .allowOffline
    }

    /// An offline launch of a mode-none session within its limits: the longest path, ends in allow.
    static let launch = Attempt(
        now: 1_780_000_000, lastIdpLoginAt: 1_780_000_000 - 86_400, lastOnlineAt: 1_780_000_000 - 3_600,
        network: .offline, authMode: .none, biometricFailures: 0, deviceKeystore: .hardware, accountRevoked: false)
}

/// `hand-written-loop`: per decision, like the `evaluate/` benchmarks (scaling factor kilo).
func handWrittenLoopBenchmark() {
    Benchmark("hand-written-loop", configuration: .init(scalingFactor: .kilo)) { benchmark in
        let attempt = HandWritten.launch
        for _ in benchmark.scaledIterations {
            blackHole(HandWritten.decide(identity(attempt)))
        }
    }
}
