import ArgumentParser

/// Exit codes, the same contract as `policyctl`'s.
enum Exit {
    /// Invalid configuration, no policy compiles, or the store cannot be opened.
    static let invalidInput = ExitCode(2)
}
