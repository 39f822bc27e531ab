import Foundation
import SessionPolicy
import SessionPolicyTestSupport
import Testing

/// One version for every artifact. The `VERSION` file at the root is the source: the jar, its
/// POM and the Debian package read it when they are built; the Swift constant (which the three
/// executables print for `--version`), the npm package's `package.json` and the CHANGELOG's
/// newest heading hold copies, which `packaging/set-version.sh` writes. Each test here fails
/// when one of them says another version.
@Suite("One version for every artifact")
struct VersionTests {
    static let version = Fixtures.text("VERSION").trimmingCharacters(in: .whitespacesAndNewlines)
    static let fix = "set every place at once with `packaging/set-version.sh \(version)`"

    @Test("VERSION holds one semantic version on one line")
    func versionFile() {
        #expect(Fixtures.text("VERSION") == Self.version + "\n", "VERSION must be the version and a newline")
        #expect(Self.version.wholeMatch(of: /[0-9]+\.[0-9]+\.[0-9]+(-[0-9A-Za-z.-]+)?/) != nil, "`\(Self.version)`")
    }

    @Test("the libraries' SessionPolicyRelease.version is VERSION")
    func libraries() {
        #expect(SessionPolicyRelease.version == Self.version, "\(Self.fix)")
    }

    @Test("policyctl --version prints VERSION")
    func policyctl() throws {
        let r = try CLI.run(["--version"])
        #expect(r.status == 0)
        #expect(r.stdout == Self.version + "\n", "\(Self.fix)")
    }

    /// The server package's executables are built by `Server/`; its tests run them
    /// (`PackageFilesTests`). Here: each shipped executable's command takes its version from the
    /// constant, and no source writes a version of its own.
    @Test(
        "every shipped executable takes --version from SessionPolicyRelease.version",
        arguments: ["Sources/policyctl", "Server/Sources/policyctl-serve", "Server/Sources/policyctl-sessions"])
    func executables(_ folder: String) throws {
        let files = SourceScan.swiftFiles(under: folder)
        let main = try #require(files.first { $0.text.contains("@main") }, "no @main in \(folder)")
        let usesTheConstant = main.text.contains("version: SessionPolicyRelease.version")
        #expect(usesTheConstant, "\(main.path): give its CommandConfiguration `version: SessionPolicyRelease.version`")
        for file in files {
            let ownVersion = file.text.firstMatch(of: /version: "[0-9][^"]*"/).map { String($0.0) }
            #expect(ownVersion == nil, "\(file.path) writes a version of its own")
        }
    }

    @Test("the npm package (runtimes/js/package.json) has VERSION")
    func npm() throws {
        let data = Data(Fixtures.text("runtimes/js/package.json").utf8)
        let json = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        #expect(json["name"] as? String == "@sessionpolicy/runtime")
        #expect(json["version"] as? String == Self.version, "\(Self.fix)")
        #expect(json["types"] as? String == "./sessionpolicy.d.ts")
        #expect((json["files"] as? [String] ?? []).contains("sessionpolicy.d.ts"), "the package ships its type declarations")
    }

    @Test("the CHANGELOG's newest heading is VERSION")
    func changelog() throws {
        let heading = try #require(
            Fixtures.text("CHANGELOG.md").split(separator: "\n").first { $0.hasPrefix("## ") }, "CHANGELOG.md has no `## ` heading")
        let named = heading.dropFirst(3).prefix { $0 != " " }
        #expect(named == Self.version[...], "CHANGELOG.md's newest heading is `\(heading)`: \(Self.fix)")
    }

    @Test("the packages, the jar and its POM are built with the version VERSION holds")
    func builtFromTheFile() {
        for script in ["runtimes/java/build.sh", "packaging/build.sh", "packaging/test-deb.sh"] {
            let text = Fixtures.text(script)
            #expect(text.contains("/VERSION\")") || text.contains("$(cat VERSION)"), "\(script) reads VERSION")
            #expect(!text.contains(Self.version), "\(script) writes the version itself instead of reading VERSION")
        }
    }

    @Test("packaging/set-version.sh writes every place these tests read")
    func setVersion() throws {
        let dir = try Fixtures.temporaryDirectory("set-version")
        defer { try? FileManager.default.removeItem(at: dir) }
        let places = ["VERSION", "Sources/SessionPolicy/SessionPolicyRelease.swift", "runtimes/js/package.json", "CHANGELOG.md"]
        for path in places + ["packaging/set-version.sh"] {
            let to = dir.appendingPathComponent(path)
            try FileManager.default.createDirectory(at: to.deletingLastPathComponent(), withIntermediateDirectories: true)
            try FileManager.default.copyItem(atPath: Fixtures.path(path), toPath: to.path)
        }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        process.arguments = [dir.appendingPathComponent("packaging/set-version.sh").path, "98.76.54"]
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        process.waitUntilExit()
        #expect(process.terminationStatus == 0)
        func text(_ path: String) throws -> String { try String(contentsOf: dir.appendingPathComponent(path), encoding: .utf8) }
        #expect(try text("VERSION") == "98.76.54\n")
        #expect(try text(places[1]).contains("public static let version = \"98.76.54\""))
        #expect(try text(places[2]).contains("\n  \"version\": \"98.76.54\",\n"))
        #expect(try text(places[3]).split(separator: "\n").first { $0.hasPrefix("## ") } == "## 98.76.54 (unreleased)")
        // Nothing else changed: the Swift constant and the npm version are replaced; the
        // CHANGELOG's newest heading renamed when unreleased, else a new one put above it.
        for path in places.dropFirst(1).dropLast() {
            #expect(try text(path) == Fixtures.text(path).replacingOccurrences(of: Self.version, with: "98.76.54"), "\(path)")
        }
        let changelog = Fixtures.text("CHANGELOG.md")
        let newest = try #require(changelog.range(of: "\n## "))
        let unreleased = "\n## \(Self.version) (unreleased)\n"
        let want =
            changelog[newest.lowerBound...].hasPrefix(unreleased)
            ? changelog.replacingOccurrences(of: unreleased, with: "\n## 98.76.54 (unreleased)\n")
            : changelog.replacingCharacters(in: newest, with: "\n## 98.76.54 (unreleased)\n\n## ")
        #expect(try text("CHANGELOG.md") == want)
    }
}
