/// The release of SessionPolicy this library belongs to.
///
/// One version names every artifact built from a commit: the libraries, `policyctl`,
/// `policyctl-serve` and `policyctl-sessions` (each prints it for `--version`), the Java runtime's
/// jar, the JavaScript runtime's npm package and the Debian package. The `VERSION` file at the
/// repository root is the source; `packaging/set-version.sh` writes it here, in
/// `runtimes/js/package.json` and in the CHANGELOG's newest heading, and `VersionTests` fails
/// when one of them differs. (Not named `SessionPolicyVersion`: the symbol graph, from which
/// API.md is generated, leaves out every name that starts with the module's name and `Version`.)
public enum SessionPolicyRelease {
    /// The version, `MAJOR.MINOR.PATCH` (semantic versioning), as in the `VERSION` file.
    public static let version = "0.2.0"
}
