/// A closed set of words written in policies, states and events (`biometric`, `wipe`, ...).
/// The reader uses `allCases` for "did you mean" hints.
public protocol PolicyKeyword: RawRepresentable, CaseIterable, Hashable, Sendable, Codable where RawValue == String {}
