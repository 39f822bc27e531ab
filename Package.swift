// swift-tools-version:6.1
import PackageDescription

let strict: [SwiftSetting] = [
    .enableUpcomingFeature("InternalImportsByDefault"),
    .enableUpcomingFeature("ExistentialAny"),
]

let package = Package(
    name: "SessionPolicy",
    platforms: [.macOS(.v13), .iOS(.v16)],
    products: [
        .library(name: "SessionPolicy", targets: ["SessionPolicy"]),
        .library(name: "SessionPolicyYAML", targets: ["SessionPolicyYAML"]),
        .library(name: "SessionPolicyCheck", targets: ["SessionPolicyCheck"]),
        .executable(name: "policyctl", targets: ["policyctl"]),
    ],
    dependencies: [
        .package(url: "https://github.com/jpsim/Yams.git", exact: "6.2.2"),
        .package(url: "https://github.com/apple/swift-argument-parser.git", exact: "1.8.2"),
    ],
    targets: [
        // Core: model, diagnostics, validation, compiler, evaluator. Foundation only.
        .target(name: "SessionPolicy", swiftSettings: strict),
        // YAML text -> located syntax -> core.
        .target(
            name: "SessionPolicyYAML",
            dependencies: ["SessionPolicy", .product(name: "Yams", package: "Yams")],
            swiftSettings: strict),
        // Scenario files: loading, running, reporting (what `policyctl check` does).
        .target(
            name: "SessionPolicyCheck",
            dependencies: ["SessionPolicy", "SessionPolicyYAML"],
            swiftSettings: strict),
        .executableTarget(
            name: "policyctl",
            dependencies: [
                "SessionPolicy", "SessionPolicyYAML", "SessionPolicyCheck",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            swiftSettings: strict),
        .target(
            name: "SessionPolicyTestSupport",
            dependencies: ["SessionPolicy", "SessionPolicyYAML"],
            path: "Tests/SessionPolicyTestSupport",
            swiftSettings: strict),
        .testTarget(
            name: "SessionPolicyTests",
            dependencies: ["SessionPolicy", "SessionPolicyYAML", "SessionPolicyCheck", "SessionPolicyTestSupport"],
            swiftSettings: strict),
        .testTarget(
            name: "PolicyctlTests",
            dependencies: ["SessionPolicyTestSupport", "policyctl"],
            swiftSettings: strict),
    ]
)
