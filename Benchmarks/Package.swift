// swift-tools-version:6.1
// Benchmarks for SessionPolicy (package-benchmark). A separate package so that the main
// package's build and CI stay light: run from this directory with
//   swift package benchmark --no-progress --format markdown
// See README.md here for the figures and the exact commands.
import Foundation
import PackageDescription

// `FastJSON` has `package` access: visible only to modules compiled with the root package's
// package name, which SwiftPM derives from the root's folder name (`codec-wt` -> `codec_wt`).
// The Codec benchmark is compiled with that name so it can call the codec without making it
// public. (The root is always `..` here.)
let rootPackageName: String = {
    let folder = URL(fileURLWithPath: Context.packageDirectory).deletingLastPathComponent().lastPathComponent
    var name = String(folder.lowercased().map { $0.isASCII && ($0.isLetter || $0.isNumber) ? $0 : "_" })
    if let first = name.first, first.isNumber { name = "_" + name }
    return name
}()

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
            ],
            path: "Benchmarks/Evaluation",
            // The stage benchmarks call the YAML reader and the loader, which are `package`.
            packageAccess: false,
            swiftSettings: [.unsafeFlags(["-package-name", rootPackageName])],
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
            name: "Codec",
            dependencies: [
                .product(name: "Benchmark", package: "benchmark"),
                .product(name: "SessionPolicy", package: "SessionPolicy"),
                .product(name: "SessionPolicyCheck", package: "SessionPolicy"),
            ],
            path: "Benchmarks/Codec",
            // SwiftPM would give the target this package's name; it gets the root's instead.
            packageAccess: false,
            swiftSettings: [.unsafeFlags(["-package-name", rootPackageName])],
            plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
        ),
    ]
)
