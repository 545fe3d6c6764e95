// swift-tools-version:6.0
// The Swift contestants of the benchmarks: bench/latency.sh (streaming latency, issue 27) and
// bench/swift.sh (httpcontent's Swift client against AsyncHTTPClient, issue 31). A package of
// its own beside the library's, so that the library's build and CI never compile it (nor SwiftNIO).
//     swift build -c release --package-path bench/swift --product LatencyBench
//     swift build -c release --package-path bench/swift --product ClientsBench
import PackageDescription

let package = Package(
    name: "httpcontent-bench",
    dependencies: [
        .package(name: "httpcontent", path: "../.."),
        .package(url: "https://github.com/swift-server/async-http-client", from: "1.37.0"),
    ],
    targets: [
        .executableTarget(name: "LatencyBench", dependencies: [
            .product(name: "HTTPContent", package: "httpcontent"),
            .product(name: "HTTPContentFoundation", package: "httpcontent"),
        ]),
        .executableTarget(name: "ClientsBench", dependencies: [
            .product(name: "HTTPContent", package: "httpcontent"),
            .product(name: "AsyncHTTPClient", package: "async-http-client"),
        ]),
    ]
)
