// swift-tools-version:6.1
// Fuzz targets (libFuzzer) for every reader of untrusted input: the YAML/JSON policy loader, the
// scenario loader, the machine document and envelope readers, the JSON state and event readers
// of the CLI and the server, and the server's request bodies. A separate package so that the
// root and the server build none of it. Build and run with `bash Fuzz/run.sh TARGET [SECONDS]`
// from the repository root (see README.md here).
//
// The targets call only public API: the wire codec (`SessionPolicyJSON`), the server's
// `RequestBodyCheck`, and for the readers that stay `package` in the root package (the policy
// and scenario loaders, the linter), the entry points of `SessionPolicyTestSupport`
// (`ReaderProbes`). Each target is one file holding `LLVMFuzzerTestOneInput` and no `main`: it
// is built with `-Xswiftc -parse-as-library` on the command line (`Fuzz/run.sh`), not with an
// unsafe flag here.
import PackageDescription

let package = Package(
    name: "SessionPolicyFuzz",
    platforms: [.macOS(.v13)],
    dependencies: [
        .package(name: "SessionPolicy", path: ".."),
        .package(name: "SessionPolicyServer", path: "../Server"),
    ],
    targets: [
        // What every target shares: the shipped policies, compiled once, and the oracles.
        .target(
            name: "FuzzShared",
            dependencies: [
                .product(name: "SessionPolicy", package: "SessionPolicy"),
                .product(name: "SessionPolicyYAML", package: "SessionPolicy"),
                .product(name: "SessionPolicyTestSupport", package: "SessionPolicy"),
            ],
            path: "Targets/FuzzShared"),
        .executableTarget(
            name: "FuzzPolicy",
            dependencies: [
                "FuzzShared",
                .product(name: "SessionPolicy", package: "SessionPolicy"),
                .product(name: "SessionPolicyYAML", package: "SessionPolicy"),
                .product(name: "SessionPolicyTestSupport", package: "SessionPolicy"),
            ],
            path: "Targets/FuzzPolicy"),
        .executableTarget(
            name: "FuzzScenarios",
            dependencies: [
                "FuzzShared",
                .product(name: "SessionPolicy", package: "SessionPolicy"),
                .product(name: "SessionPolicyYAML", package: "SessionPolicy"),
                .product(name: "SessionPolicyCheck", package: "SessionPolicy"),
                .product(name: "SessionPolicyTestSupport", package: "SessionPolicy"),
            ],
            path: "Targets/FuzzScenarios"),
        .executableTarget(
            name: "FuzzMachine",
            dependencies: [
                "FuzzShared",
                .product(name: "SessionPolicy", package: "SessionPolicy"),
                .product(name: "SessionPolicyDelivery", package: "SessionPolicy"),
            ],
            path: "Targets/FuzzMachine"),
        .executableTarget(
            name: "FuzzStateEvent",
            dependencies: [
                "FuzzShared",
                .product(name: "SessionPolicy", package: "SessionPolicy"),
                .product(name: "SessionPolicyJSON", package: "SessionPolicy"),
            ],
            path: "Targets/FuzzStateEvent"),
        .executableTarget(
            name: "FuzzRequestBody",
            dependencies: [
                "FuzzShared", .product(name: "SessionPolicyServer", package: "SessionPolicyServer"),
            ],
            path: "Targets/FuzzRequestBody"),
    ]
)
