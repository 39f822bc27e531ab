// swift-tools-version:6.1
// Fuzz targets (libFuzzer) for every reader of untrusted input: the YAML/JSON policy loader, the
// scenario loader, the machine document and envelope readers, the JSON state and event readers
// of the CLI and the server, and the server's request bodies. A separate package so that the root and the server build none of it. Build
// and run with `bash Fuzz/run.sh TARGET [SECONDS]` from the repository root (see README.md here).
import Foundation
import PackageDescription

// The readers under test have `package` access (the fast codec, the YAML syntax, the scenario
// loader, the server's request check): visible only to modules compiled with the root
// package's package name, which SwiftPM derives from the root's folder name.
let rootPackageName: String = {
    let folder = URL(fileURLWithPath: Context.packageDirectory).deletingLastPathComponent().lastPathComponent
    var name = String(folder.lowercased().map { $0.isASCII && ($0.isLetter || $0.isNumber) ? $0 : "_" })
    if let first = name.first, first.isNumber { name = "_" + name }
    return name
}()

let settings: [SwiftSetting] = [.unsafeFlags(["-package-name", rootPackageName, "-parse-as-library"])]

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
            ],
            path: "Targets/FuzzShared", packageAccess: false, swiftSettings: settings),
        .executableTarget(
            name: "FuzzPolicy",
            dependencies: [
                "FuzzShared",
                .product(name: "SessionPolicy", package: "SessionPolicy"),
                .product(name: "SessionPolicyYAML", package: "SessionPolicy"),
            ],
            path: "Targets/FuzzPolicy", packageAccess: false, swiftSettings: settings),
        .executableTarget(
            name: "FuzzScenarios",
            dependencies: [
                "FuzzShared",
                .product(name: "SessionPolicy", package: "SessionPolicy"),
                .product(name: "SessionPolicyYAML", package: "SessionPolicy"),
                .product(name: "SessionPolicyCheck", package: "SessionPolicy"),
            ],
            path: "Targets/FuzzScenarios", packageAccess: false, swiftSettings: settings),
        .executableTarget(
            name: "FuzzMachine",
            dependencies: [
                "FuzzShared",
                .product(name: "SessionPolicy", package: "SessionPolicy"),
                .product(name: "SessionPolicyDelivery", package: "SessionPolicy"),
            ],
            path: "Targets/FuzzMachine", packageAccess: false, swiftSettings: settings),
        .executableTarget(
            name: "FuzzStateEvent",
            dependencies: ["FuzzShared", .product(name: "SessionPolicy", package: "SessionPolicy")],
            path: "Targets/FuzzStateEvent", packageAccess: false, swiftSettings: settings),
        .executableTarget(
            name: "FuzzRequestBody",
            dependencies: [
                "FuzzShared", .product(name: "SessionPolicyServer", package: "SessionPolicyServer"),
            ],
            path: "Targets/FuzzRequestBody", packageAccess: false, swiftSettings: settings),
    ]
)
