/// A configuration mistake found at start (a bad flag or environment variable, a key file that
/// does not read). `policyctl serve` prints it and exits 2.
public struct ConfigurationError: Error, CustomStringConvertible {
    /// What is wrong.
    public var message: String
    /// How to fix it.
    public var help: String?

    /// Creates an error.
    public init(_ message: String, help: String? = nil) {
        self.message = message
        self.help = help
    }

    public var description: String { help.map { "\(message)\n  = help: \($0)" } ?? message }
}
