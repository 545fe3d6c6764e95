// swift-tools-version:6.0
// The Swift contestants of bench/latency.sh (streaming latency, issue 27): a package of its own
// beside the library's, so that the library's build and CI never compile it.
//     swift build -c release --package-path bench/swift
import PackageDescription

let package = Package(
    name: "httpcontent-bench",
    dependencies: [.package(name: "httpcontent", path: "../..")],
    targets: [
        .executableTarget(name: "LatencyBench", dependencies: [
            .product(name: "HTTPContent", package: "httpcontent"),
            .product(name: "HTTPContentFoundation", package: "httpcontent"),
        ]),
    ]
)
