// swift-tools-version:6.0
// The OpenAPI transport benchmark (issue 30): httpcontent's HTTPContentTransport against
// swift-openapi-async-http-client, both under the same generated client. A package of its own
// beside the library's, so that the library's build and CI never compile SwiftNIO.
//     bench/openapi.sh   (builds this with -c release, starts nginx, runs the rounds)
import PackageDescription

let package = Package(
    name: "httpcontent-openapi-bench",
    dependencies: [
        .package(name: "httpcontent", path: "../.."),
        .package(url: "https://github.com/apple/swift-openapi-runtime", from: "1.13.4"),
        .package(url: "https://github.com/swift-server/swift-openapi-async-http-client", from: "1.5.0"),
        .package(url: "https://github.com/swift-server/async-http-client", from: "1.37.0"),
    ],
    targets: [
        // EchoAPI is a link to Tests/HTTPContentOpenAPITests/EchoAPI: the same generated client
        // the transport's tests use.
        .executableTarget(name: "OpenAPIBench", dependencies: [
            .product(name: "HTTPContentOpenAPI", package: "httpcontent"),
            .product(name: "OpenAPIRuntime", package: "swift-openapi-runtime"),
            .product(name: "OpenAPIAsyncHTTPClient", package: "swift-openapi-async-http-client"),
            .product(name: "AsyncHTTPClient", package: "async-http-client"),
        ], exclude: ["EchoAPI/openapi.yaml", "EchoAPI/openapi-generator-config.yaml", "EchoAPI/README.md"]),
    ]
)
