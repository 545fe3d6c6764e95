// swift-tools-version:6.0
import PackageDescription

// The Swift core (`HTTPContent`) is what Swift callers use. `HTTPContentC` is the C ABI over it,
// built as the dynamic library `libhttpcontent.so`; CMakeLists.txt builds the distributable copy
// (static Swift stdlib, only hc_* exported), since those linker flags must not leak to Swift clients.
let package = Package(
    name: "httpcontent",
    products: [
        .library(name: "HTTPContent", targets: ["HTTPContent"]),
        // URL, Data, Date and AsyncSequence bodies over the core, which stays Foundation-free.
        .library(name: "HTTPContentFoundation", targets: ["HTTPContentFoundation"]),
        // A ClientTransport for swift-openapi-runtime: every swift-openapi-generator client runs
        // on httpcontent. Only this target depends on OpenAPIRuntime and HTTPTypes.
        .library(name: "HTTPContentOpenAPI", targets: ["HTTPContentOpenAPI"]),
        .library(name: "httpcontent", type: .dynamic, targets: ["HTTPContentC"]),
        .executable(name: "hc", targets: ["hc"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
        .package(url: "https://github.com/apple/swift-openapi-runtime", from: "1.13.4"),
        .package(url: "https://github.com/apple/swift-http-types", from: "1.8.0"),
    ],
    targets: [
        .systemLibrary(name: "CCurl", path: "Sources/CCurl", pkgConfig: "libcurl",
                       providers: [.apt(["libcurl4-openssl-dev"])]),
        .systemLibrary(name: "CYajl", path: "Sources/CYajl", pkgConfig: "yajl",
                       providers: [.apt(["libyajl-dev"])]),
        .systemLibrary(name: "CXML2", path: "Sources/CXML2", pkgConfig: "libxml-2.0",
                       providers: [.apt(["libxml2-dev"])]),
        .systemLibrary(name: "CPlist", path: "Sources/CPlist", pkgConfig: "libplist-2.0",
                       providers: [.apt(["libplist-dev"])]),
        // The image codecs' push decoders (libpng, libjpeg-turbo, giflib, libwebp): C, because
        // libpng and libjpeg report errors by longjmp, which Swift frames must never see.
        .target(name: "CImageCodecs", path: "Sources/CImageCodecs",
                linkerSettings: [.linkedLibrary("png16"), .linkedLibrary("jpeg"), .linkedLibrary("gif"),
                                 .linkedLibrary("webp")]),
        .systemLibrary(name: "CCrypto", path: "Sources/CCrypto", pkgConfig: "libcrypto",
                       providers: [.apt(["libssl-dev"])]),
        .systemLibrary(name: "CPCRE2", path: "Sources/CPCRE2", pkgConfig: "libpcre2-8",
                       providers: [.apt(["libpcre2-dev"])]),
        // IDNA2008 / UTS #46 for the hostname, idn-hostname and idn-email formats (libcurl's own).
        .systemLibrary(name: "CIDN2", path: "Sources/CIDN2", pkgConfig: "libidn2",
                       providers: [.apt(["libidn2-dev"])]),
        // The HTTP cache's SQLite store (the system libsqlite3).
        .systemLibrary(name: "CSQLite", path: "Sources/CSQLite", pkgConfig: "sqlite3",
                       providers: [.apt(["libsqlite3-dev"])]),
        // Linux file calls glibc hides without _GNU_SOURCE (fallocate); a header, no library.
        .systemLibrary(name: "CFileIO", path: "Sources/CFileIO"),
        .target(name: "HTTPContent", dependencies: ["CFileIO", "CCurl", "CYajl", "CCrypto", "CXML2", "CImageCodecs", "CPlist", "CPCRE2", "CIDN2", "CSQLite"]),
        .target(name: "HTTPContentC", dependencies: ["HTTPContent"]),
        .target(name: "HTTPContentFoundation", dependencies: ["HTTPContent"]),
        .target(name: "HTTPContentOpenAPI", dependencies: [
            "HTTPContent", "HTTPContentFoundation",
            .product(name: "OpenAPIRuntime", package: "swift-openapi-runtime"),
            .product(name: "HTTPTypes", package: "swift-http-types"),
        ]),
        .executableTarget(name: "hc", dependencies: [
            "HTTPContent",
            .product(name: "ArgumentParser", package: "swift-argument-parser"),
        ]),
        .testTarget(name: "HTTPContentTests", dependencies: ["HTTPContent", "HTTPContentFoundation"]),
        // EchoAPI/Types.swift and Client.swift were generated once from EchoAPI/openapi.yaml.
        .testTarget(name: "HTTPContentOpenAPITests", dependencies: ["HTTPContentOpenAPI"],
                    exclude: ["EchoAPI/openapi.yaml", "EchoAPI/openapi-generator-config.yaml", "EchoAPI/README.md"]),
    ]
)
