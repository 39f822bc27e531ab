// swift-tools-version:6.1
// The HTTP server: the `SessionPolicyServer` library, its executable `policyctl-serve` (what
// `policyctl serve` runs), the examples that need Hummingbird, and the server's tests. A package
// of its own so that an app depending on the core, and `policyctl check` at the root, never
// resolve or build Hummingbird, GRDB, postgres-nio, jwt-kit, swift-crypto or Prometheus. It
// depends on the root package by path. From the repository root:
//   swift build --package-path Server
//   swift run --package-path Server policyctl-serve --policies policies
//   swift test --package-path Server --disable-xctest
import PackageDescription

// The server uses only the public API of the root package's products: the core, the YAML front
// end, the wire codec (`SessionPolicyJSON`) and the signed machines; `package` declarations of
// the root package are the root package's own. No unsafe flags, so this package can be a
// versioned dependency.
let strict: [SwiftSetting] = [
    .enableUpcomingFeature("InternalImportsByDefault"),
    .enableUpcomingFeature("ExistentialAny"),
]

let package = Package(
    name: "SessionPolicyServer",
    platforms: [.macOS(.v13), .iOS(.v16)],
    products: [
        .library(name: "SessionPolicyServer", targets: ["SessionPolicyServer"]),
        .executable(name: "policyctl-serve", targets: ["policyctl-serve"]),
        .executable(name: "policyctl-sessions", targets: ["policyctl-sessions"]),
    ],
    dependencies: [
        // The root package, by path. Its identity would be the checkout folder's name (`main`,
        // a CI clone's name...), so it is given an explicit name.
        .package(name: "SessionPolicy", path: ".."),
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
        // Fetches issuers' discovery documents and key sets (HTTPS, timeouts, trust roots).
        .package(url: "https://github.com/swift-server/async-http-client.git", exact: "1.37.0"),
        .package(url: "https://github.com/apple/swift-nio-ssl.git", exact: "2.37.6"),
        // OpenTelemetry traces (`tracing.otlp.endpoint`): the OTLP/HTTP exporter only, not gRPC's.
        .package(url: "https://github.com/swift-otel/swift-otel.git", exact: "1.6.0", traits: ["OTLPHTTP"]),
        .package(url: "https://github.com/apple/swift-distributed-tracing.git", exact: "1.7.3"),
        .package(url: "https://github.com/apple/swift-service-context.git", exact: "1.5.1"),
        .package(url: "https://github.com/apple/swift-http-types.git", exact: "1.8.0"),
    ],
    targets: [
        // The HTTP service: evaluation API, session storage (SQLite, PostgreSQL), device sessions.
        .target(
            name: "SessionPolicyServer",
            dependencies: [
                .product(name: "SessionPolicy", package: "SessionPolicy"),
                .product(name: "SessionPolicyYAML", package: "SessionPolicy"),
                .product(name: "SessionPolicyJSON", package: "SessionPolicy"),
                .product(name: "SessionPolicyDelivery", package: "SessionPolicy"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdCore", package: "hummingbird"),
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
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "OTel", package: "swift-otel"),
                .product(name: "Tracing", package: "swift-distributed-tracing"),
                .product(name: "ServiceContextModule", package: "swift-service-context"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
            ],
            swiftSettings: strict),
        // `policyctl serve` as its own executable: the same options, environment and exit codes.
        .executableTarget(
            name: "policyctl-serve",
            dependencies: [
                "SessionPolicyServer",
                .product(name: "SessionPolicy", package: "SessionPolicy"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Configuration", package: "swift-configuration"),
            ],
            swiftSettings: strict),
        // The stored sessions of a policy as JSON lines, read-only (`policyctl diff --storage`).
        .executableTarget(
            name: "policyctl-sessions",
            dependencies: [
                "SessionPolicyServer",
                .product(name: "SessionPolicy", package: "SessionPolicy"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strict),
        .testTarget(
            name: "SessionPolicyServerTests",
            dependencies: [
                "SessionPolicyServer", "policyctl-serve", "policyctl-sessions",
                .product(name: "SessionPolicyTestSupport", package: "SessionPolicy"),
                .product(name: "SessionPolicyCheck", package: "SessionPolicy"),
                .product(name: "SessionPolicyDelivery", package: "SessionPolicy"),
                .product(name: "SessionPolicyYAML", package: "SessionPolicy"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "HummingbirdTesting", package: "hummingbird"),
                .product(name: "JWTKit", package: "jwt-kit"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "Configuration", package: "swift-configuration"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
            ],
            swiftSettings: strict),
        // A server of one's own that embeds the evaluator directly (docs/server.md, "Embedding the evaluator in your own server").
        .executableTarget(
            name: "embedding-server",
            dependencies: [
                .product(name: "SessionPolicy", package: "SessionPolicy"),
                .product(name: "SessionPolicyYAML", package: "SessionPolicy"),
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
    ]
)
