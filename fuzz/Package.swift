// swift-tools-version:6.0
import PackageDescription

// libFuzzer targets for httpcontent, kept out of the main package so `swift build` and
// `swift test` there never build them. Build and run with `bash fuzz/run.sh [SECONDS]`; by hand:
//   swift build --package-path fuzz -c release -Xswiftc -sanitize=fuzzer,address -Xswiftc -parse-as-library
//   fuzz/.build/release/fuzz-text fuzz/corpus/fuzz-text -max_total_time=60
// Each executable exports `LLVMFuzzerTestOneInput` and has an `@main` that hands it to libFuzzer's
// driver (`LLVMFuzzerRunDriver`): SwiftPM points `main` at the module's own entry point, so
// libFuzzer's `main` is never linked in. All libFuzzer flags (-max_total_time, -runs, corpus
// dirs, a crash file to reproduce) work as usual.
let core: Target.Dependency = .product(name: "HTTPContent", package: "httpcontent")

let package = Package(
    name: "httpcontent-fuzz",
    dependencies: [
        .package(name: "httpcontent", path: ".."),
    ],
    targets: [
        .target(name: "CLibFuzzer"),
        .target(name: "FuzzSupport", dependencies: ["CLibFuzzer"]),
        .executableTarget(name: "fuzz-text", dependencies: [core, "FuzzSupport"]),
        .executableTarget(name: "fuzz-mediatype", dependencies: [core, "FuzzSupport"]),
        .executableTarget(name: "fuzz-image", dependencies: [core, "FuzzSupport"]),
        .executableTarget(name: "fuzz-form", dependencies: [core, "FuzzSupport"]),
        .executableTarget(name: "fuzz-json", dependencies: [core, "FuzzSupport"]),
        .executableTarget(name: "fuzz-records", dependencies: [core, "FuzzSupport"]),
        .executableTarget(name: "fuzz-plist", dependencies: [core, "FuzzSupport"]),
        .executableTarget(name: "fuzz-pixels", dependencies: [core, "FuzzSupport"]),
        .executableTarget(name: "fuzz-xml", dependencies: [core, "FuzzSupport"]),
        .executableTarget(name: "fuzz-cache-entry", dependencies: [core, "FuzzSupport"]),
    ]
)
