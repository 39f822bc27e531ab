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
        .library(name: "SessionPolicyServer", targets: ["SessionPolicyServer"]),
        .executable(name: "policyctl", targets: ["policyctl"]),
    ],
    dependencies: [
        .package(url: "https://github.com/jpsim/Yams.git", exact: "6.2.2"),
        .package(url: "https://github.com/apple/swift-argument-parser.git", exact: "1.8.2"),
        .package(url: "https://github.com/hummingbird-project/hummingbird.git", exact: "2.28.1", traits: []),
        .package(url: "https://github.com/groue/GRDB.swift.git", exact: "7.10.0"),
        .package(url: "https://github.com/vapor/postgres-nio.git", exact: "1.33.2"),
        .package(url: "https://github.com/vapor/jwt-kit.git", exact: "5.8.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus.git", exact: "2.4.1"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle.git", exact: "2.13.0"),
        .package(url: "https://github.com/apple/swift-log.git", exact: "1.16.2"),
        .package(url: "https://github.com/apple/swift-nio.git", exact: "2.101.3"),
        .package(url: "https://github.com/apple/swift-crypto.git", exact: "4.5.2"),
        .package(url: "https://github.com/apple/swift-configuration.git", exact: "1.4.0"),
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
        // The HTTP service: evaluation API, session storage (SQLite, PostgreSQL), device sessions.
        .target(
            name: "SessionPolicyServer",
            dependencies: [
                "SessionPolicy", "SessionPolicyYAML",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "GRDBSQLite", package: "GRDB.swift"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "JWTKit", package: "jwt-kit"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Configuration", package: "swift-configuration"),
            ],
            swiftSettings: strict),
        .executableTarget(
            name: "policyctl",
            dependencies: [
                "SessionPolicy", "SessionPolicyYAML", "SessionPolicyCheck", "SessionPolicyServer",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Configuration", package: "swift-configuration"),
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
            name: "SessionPolicyServerTests",
            dependencies: [
                "SessionPolicyServer", "SessionPolicyTestSupport", "SessionPolicyCheck",
                .product(name: "HummingbirdTesting", package: "hummingbird"),
                .product(name: "JWTKit", package: "jwt-kit"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "Configuration", package: "swift-configuration"),
            ],
            swiftSettings: strict),
        // A server of one's own that embeds the evaluator directly (README "Embedding").
        .executableTarget(
            name: "embedding-server",
            dependencies: [
                "SessionPolicy", "SessionPolicyYAML",
                .product(name: "Hummingbird", package: "hummingbird"),
            ],
            path: "examples/embedding-server",
            swiftSettings: strict),
        // The load scripts' yardstick: a trivial Hummingbird JSON echo handler.
        .executableTarget(
            name: "echo-server",
            dependencies: [.product(name: "Hummingbird", package: "hummingbird")],
            path: "load/echo-server",
            swiftSettings: strict),
        .testTarget(
            name: "PolicyctlTests",
            dependencies: ["SessionPolicyTestSupport", "policyctl"],
            swiftSettings: strict),
    ]
)
