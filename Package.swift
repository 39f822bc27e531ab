// swift-tools-version:6.1
import PackageDescription

let strict: [SwiftSetting] = [
    .enableUpcomingFeature("InternalImportsByDefault"),
    .enableUpcomingFeature("ExistentialAny"),
]

// The core and what the security engineer runs: the Foundation-only core, the YAML front end,
// the scenario checker, the signed-machine updater and `policyctl` (check, lint, eval, explain,
// compile, sign, inspect). Its only package dependencies are swift-argument-parser and
// swift-crypto: an app that depends on the core product resolves those two and builds neither
// (`SessionPolicyDelivery`, the updater, builds swift-crypto, which on Apple platforms is
// CryptoKit), and `swift run policyctl check` builds no server. The YAML front end links the
// system's libyaml (`CLibYAML`: Debian's libyaml-dev, Homebrew's libyaml); the core does not.
//
// The HTTP server (`policyctl-serve`, the `SessionPolicyServer` library) and everything only it
// needs (Hummingbird, GRDB, postgres-nio, jwt-kit, swift-crypto, Prometheus...) is its own
// package in `Server/`, which depends on this one by path; `Benchmarks/` is another.
let package = Package(
    name: "SessionPolicy",
    platforms: [.macOS(.v13), .iOS(.v16)],
    products: [
        .library(name: "SessionPolicy", targets: ["SessionPolicy"]),
        .library(name: "SessionPolicyYAML", targets: ["SessionPolicyYAML"]),
        .library(name: "SessionPolicyJSON", targets: ["SessionPolicyJSON"]),
        .library(name: "SessionPolicyCheck", targets: ["SessionPolicyCheck"]),
        .library(name: "SessionPolicyVerify", targets: ["SessionPolicyVerify"]),
        .library(name: "SessionPolicyDelivery", targets: ["SessionPolicyDelivery"]),
        .executable(name: "policyctl", targets: ["policyctl"]),
        // The repository's own test fixtures and helpers, a product only so that the server
        // package's tests can share them. Not API: no stability promise.
        .library(name: "SessionPolicyTestSupport", targets: ["SessionPolicyTestSupport"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser.git", exact: "1.8.2"),
        .package(url: "https://github.com/apple/swift-crypto.git", exact: "4.5.2"),
    ],
    targets: [
        // Core: model, diagnostics, validation, compiler, evaluator. Foundation only. It keeps the
        // strict, located JSON reader (`JSONSyntax`, `SyntaxReader`, `JSONInput`): the core reads
        // the portable machine document, `.json` policies and `SessionState(json:)` without YAML
        // and without the wire codec below, so an app that evaluates a delivered machine links
        // neither.
        .target(name: "SessionPolicy", swiftSettings: strict),
        // The server's hot-path JSON wire codec: the fast readers of states, events and request
        // bodies (each reads what the core's located reader reads, or declines), the strict
        // readers of the request bodies (located diagnostics), and the fast writers of outcomes
        // and states. Not linked by an app that depends only on `SessionPolicy`.
        .target(name: "SessionPolicyJSON", dependencies: ["SessionPolicy"], swiftSettings: strict),
        // YAML text -> located syntax -> core: one pass over libyaml's events.
        .target(name: "SessionPolicyYAML", dependencies: ["SessionPolicy", "CLibYAML"], swiftSettings: strict),
        // The system's libyaml, found by pkg-config (`yaml-0.1`): a module map and a shim header
        // that includes <yaml.h>.
        .systemLibrary(
            name: "CLibYAML", pkgConfig: "yaml-0.1",
            providers: [.apt(["libyaml-dev"]), .brew(["libyaml"])]),
        // Scenario files: loading, running, reporting (what `policyctl check` does).
        .target(
            name: "SessionPolicyCheck",
            dependencies: ["SessionPolicy", "SessionPolicyYAML"],
            swiftSettings: strict),
        // Exhaustive exploration of a compiled machine: what `policyctl verify` proves.
        .target(name: "SessionPolicyVerify", dependencies: ["SessionPolicy"], exclude: ["GLOSSARY.md"], swiftSettings: strict),
        // Signed machines (docs/envelope.md): the updater an app embeds, the signer of `policyctl
        // sign` and the server.
        .target(
            name: "SessionPolicyDelivery",
            dependencies: ["SessionPolicy", .product(name: "Crypto", package: "swift-crypto")],
            swiftSettings: strict),
        // `serve` runs `policyctl-serve`, built by the server package.
        .executableTarget(
            name: "policyctl",
            dependencies: [
                "SessionPolicy", "SessionPolicyYAML", "SessionPolicyCheck", "SessionPolicyVerify", "SessionPolicyDelivery",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Crypto", package: "swift-crypto"),
            ],
            swiftSettings: strict),
        .target(
            name: "SessionPolicyTestSupport",
            dependencies: ["SessionPolicy", "SessionPolicyYAML", "SessionPolicyCheck"],
            path: "Tests/SessionPolicyTestSupport",
            swiftSettings: strict),
        .testTarget(
            name: "SessionPolicyTests",
            dependencies: [
                "SessionPolicy", "SessionPolicyYAML", "SessionPolicyJSON", "SessionPolicyCheck", "SessionPolicyVerify",
                "SessionPolicyDelivery", "SessionPolicyTestSupport", .product(name: "Crypto", package: "swift-crypto"),
            ],
            swiftSettings: strict),
        .testTarget(
            name: "PolicyctlTests",
            dependencies: ["SessionPolicy", "SessionPolicyYAML", "SessionPolicyCheck", "SessionPolicyTestSupport", "policyctl"],
            swiftSettings: strict),
    ]
)
