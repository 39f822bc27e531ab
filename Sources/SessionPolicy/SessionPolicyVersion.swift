/// The version of SessionPolicy this library belongs to.
///
/// One version names every artifact built from a commit: the libraries, `policyctl`,
/// `policyctl-serve` and `policyctl-sessions` (each prints it for `--version`), the Java runtime's
/// jar, the JavaScript runtime's npm package and the Debian package. The `VERSION` file at the
/// repository root is the source; `packaging/set-version.sh` writes it here, in
/// `runtimes/js/package.json` and in the CHANGELOG's newest heading, and `VersionTests` fails
/// when one of them differs.
public enum SessionPolicyVersion {
    /// The version, `MAJOR.MINOR.PATCH` (semantic versioning), as in the `VERSION` file.
    public static let current = "0.2.0"
}
