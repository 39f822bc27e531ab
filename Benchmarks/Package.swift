// swift-tools-version:6.1
// Benchmarks for SessionPolicy (package-benchmark). A separate package so that the main
// package's build and CI stay light: run from this directory with
//   swift package benchmark --no-progress --format markdown
// See README.md here for the figures and the exact commands.
import PackageDescription

// Every target uses only public API of the root package's products (no unsafe flags).
let package = Package(
    name: "SessionPolicyBenchmarks",
    platforms: [.macOS(.v13), .iOS(.v16)],
    dependencies: [
        // The root package, by path. Its identity would be the checkout folder's name
        // (`bench-wt`, `main`, a CI clone's name...), so it is given an explicit name.
        .package(name: "SessionPolicy", path: ".."),
        // Without the MallocInterposer trait (i.e. with the default traits) resolution asks for
        // swift-runtime-interposer, which the package mirror does not have.
        .package(url: "https://github.com/ordo-one/benchmark.git", exact: "1.38.1", traits: ["MallocInterposer"]),
    ],
    targets: [
        .executableTarget(
            name: "Evaluation",
            dependencies: [
                .product(name: "Benchmark", package: "benchmark"),
                .product(name: "SessionPolicy", package: "SessionPolicy"),
                .product(name: "SessionPolicyYAML", package: "SessionPolicy"),
                // The stage benchmarks reach the YAML reader and the validator through `ReaderProbes`.
                .product(name: "SessionPolicyTestSupport", package: "SessionPolicy"),
            ],
            path: "Benchmarks/Evaluation",
            plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
        ),
        .executableTarget(
            name: "Verify",
            dependencies: [
                .product(name: "Benchmark", package: "benchmark"),
                .product(name: "SessionPolicyVerify", package: "SessionPolicy"),
                .product(name: "SessionPolicyYAML", package: "SessionPolicy"),
            ],
            path: "Benchmarks/Verify",
            plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
        ),
        .executableTarget(
            name: "Diff",
            dependencies: [
                .product(name: "Benchmark", package: "benchmark"),
                .product(name: "SessionPolicyVerify", package: "SessionPolicy"),
                .product(name: "SessionPolicyYAML", package: "SessionPolicy"),
            ],
            path: "Benchmarks/Diff",
            plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
        ),
        .executableTarget(
            name: "Codec",
            dependencies: [
                .product(name: "Benchmark", package: "benchmark"),
                .product(name: "SessionPolicy", package: "SessionPolicy"),
                .product(name: "SessionPolicyJSON", package: "SessionPolicy"),
                .product(name: "SessionPolicyCheck", package: "SessionPolicy"),
            ],
            path: "Benchmarks/Codec",
            plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
        ),
    ]
)
