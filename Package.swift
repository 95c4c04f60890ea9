// swift-tools-version:6.0
// metascrub: find and remove privacy-sensitive metadata from media files, losslessly.
// SPDX-License-Identifier: GPL-3.0-or-later
import PackageDescription

/// A Debian library reached through pkg-config and a module map (see `Sources/C*/`).
func systemLibrary(_ name: String, pkgConfig: String, apt: [String]) -> Target {
    .systemLibrary(name: name, path: "Sources/\(name)", pkgConfig: pkgConfig, providers: [.apt(apt)])
}

/// Release executables carry the Swift runtime and Foundation inside, as `--static-swift-stdlib` would, so a plain
/// `swift build -c release` gives the fast binaries too. Resolving their symbols was half of a process start, and
/// every worker child forked by `metascrub serve` paid for the shared libraries' mappings again (CPU per request
/// ×0.85 without them, docs/benchmarks.md). Compiling with the flag makes the static Foundation modules name the
/// archives they need; linking with it takes them. METASCRUB_SHARED_SWIFT_RUNTIME=1 links them as shared libraries,
/// for a toolchain without `lib/swift_static`.
let staticSwiftRuntime = BuildSettingCondition.when(platforms: [.linux], configuration: .release)
let sharedRuntime = Context.environment["METASCRUB_SHARED_SWIFT_RUNTIME"] == "1"
let staticRuntimeSwiftSettings: [SwiftSetting] =
    sharedRuntime ? [] : [.unsafeFlags(["-static-stdlib"], staticSwiftRuntime)]
let staticRuntimeLinkerSettings: [LinkerSetting] =
    sharedRuntime ? [] : [.unsafeFlags(["-static-stdlib"], staticSwiftRuntime)]

let package = Package(
    name: "metascrub",
    products: [
        .executable(name: "metascrub", targets: ["metascrub"]),
        .executable(name: "metascrub-serve", targets: ["metascrub-serve"]),
        .library(name: "Metascrub", targets: ["Metascrub"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
        .package(url: "https://github.com/jpsim/Yams", from: "6.0.0"),
        // `metascrub serve` only (MetascrubServe): the HTTP server, SIGTERM draining, Prometheus metrics.
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.1"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus", from: "2.4.1"),
        .package(url: "https://github.com/apple/swift-log", from: "1.6.0"),
        .package(url: "https://github.com/apple/swift-http-types", from: "1.0.0"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.80.0"),
        .package(url: "https://github.com/apple/swift-nio-extras", from: "1.24.0"),
        // C2PA signers' certificates (pure Swift: the formats link no further C library).
        .package(url: "https://github.com/apple/swift-asn1.git", from: "1.0.0"),
    ],
    targets: [
        // The model: formats, items, categories, findings, policies, reports. No C library.
        .target(name: "MetascrubCore", dependencies: [.product(name: "Yams", package: "Yams")]),

        // Debian's C libraries, each behind a module map.
        systemLibrary("CExif", pkgConfig: "libexif", apt: ["libexif-dev"]),
        systemLibrary("CTurboJPEG", pkgConfig: "libturbojpeg", apt: ["libturbojpeg0-dev"]),
        systemLibrary("CPNG", pkgConfig: "libpng", apt: ["libpng-dev"]),
        // libheif through dlopen on first use (heif_lazy.c): linking it cost every process start its codecs'
        // initialisers. Its headers come from libheif-dev.
        .target(name: "CHeif", dependencies: ["CLazyLibrary"]),
        // Not linked by any target yet: FFmpeg costs ~40 ms per process start, so the audio/video formats must
        // reach it through dlopen on first use (see NativeLibraries.swift).
        systemLibrary("CFFmpeg", pkgConfig: "libavformat", apt: ["libavformat-dev", "libavcodec-dev", "libavutil-dev"]),
        systemLibrary("CZlib", pkgConfig: "zlib", apt: ["zlib1g-dev"]),
        systemLibrary("CDeflate", pkgConfig: "libdeflate", apt: ["libdeflate-dev"]),
        systemLibrary("CWebP", pkgConfig: "libwebp", apt: ["libwebp-dev"]),
        systemLibrary("CNettle", pkgConfig: "nettle", apt: ["nettle-dev"]),
        // SVG is hostile XML: parsed by libxml2 (libxml2-dev) with no network, no external entities and its size
        // limits on, behind a plain C API (libxml2's headers include ICU headers that clash with Foundation's).
        .target(name: "CSVGXML", cSettings: [.unsafeFlags(["-I/usr/include/libxml2"])], linkerSettings: [.linkedLibrary("xml2")]),
        // exiv2 is C++: a small C API over it, every call inside try/catch.
        .target(
            name: "CExiv2Bridge",
            cxxSettings: [.unsafeFlags(["-std=c++17"])],
            linkerSettings: [.linkedLibrary("exiv2")]
        ),

        // LibRaw (C API over C++, thread-safe build), through dlopen on first use: decodes camera raws to prove a
        // cleaned raw decodes the same.
        .target(name: "CRawBridge", dependencies: ["CLazyLibrary"]),
        // libtiff through dlopen on first use (headers from libtiff-dev): decodes and encodes TIFF samples for
        // orientation bakes and conversions (issue 16); the container itself is ours.
        .target(name: "CTIFFBridge", dependencies: ["CLazyLibrary"]),
        // QPDF's C API through dlopen on first use (headers from libqpdf-dev): reads and writes PDFs.
        .target(name: "CQPDF", dependencies: ["CLazyLibrary"]),
        // dlopen on first use, shared by CHeif, CRawBridge, CTIFFBridge and CQPDF.
        .target(name: "CLazyLibrary", linkerSettings: [.linkedLibrary("dl")]),

        // libjpeg's scanline decoder (libjpeg62-turbo), for comparing a conversion with its source a few rows at a
        // time; its errors come back as values, not a process exit.
        .target(name: "CJPEGStream", linkerSettings: [.linkedLibrary("jpeg")]),

        // Linux system calls Glibc's module does not export.
        .target(name: "CPlatform"),
        // libjxl's decoder through dlopen (headers from libjxl-dev; see the header for why it is not linked).
        .target(name: "CJXLLoader"),

        // FFmpeg through dlopen on first use (never linked: it costs ~40 ms per process start). FFmpeg's
        // headers give the types; a plain C API faces Swift.
        .target(name: "CAVBridge"),

        // Swift wrappers over the C libraries: tag names, maker-note decoding, lossless JPEG transforms.
        .target(name: "MetascrubNative", dependencies: ["MetascrubCore", "CExif", "CTurboJPEG", "CExiv2Bridge", "CRawBridge", "CPNG", "CHeif", "CJXLLoader", "CWebP", "CZlib", "CDeflate", "CTIFFBridge", "CJPEGStream"]),

        // One reader/remuxer per container format, and the registry table that lists them.
        // CNettle: SHA-256 keys of `RawDecodeMemo` (a raw's decode is reused by its digest).
        .target(name: "MetascrubFormats", dependencies: ["MetascrubCore", "MetascrubNative", "CPlatform", "CAVBridge", "CNettle",
                                                         "CQPDF", "CSVGXML", .product(name: "SwiftASN1", package: "swift-asn1")]),

        // The pipeline: walk, detect, scan, decide, clean, verify, write atomically, report; and the workflows
        // around it (Workflow/: folders, config, progress, stdin/stdout; Git/: staged files and the hook).
        .target(
            name: "Metascrub",
            dependencies: [
                "MetascrubCore", "MetascrubFormats", "MetascrubNative", "CPlatform", "CNettle", .product(name: "Yams", package: "Yams"),
            ]
        ),

        // Process isolation for one file (issue 27): rlimits, no network, a seccomp filter (libseccomp).
        .target(name: "CSandbox", linkerSettings: [.linkedLibrary("seccomp")]),
        // What the sandbox must refuse (an AF_INET socket, an exec), tried on purpose: linked into metascrub-serve
        // only, so the metascrub binary, which parses the hostile files, imports no socket function at all.
        .target(name: "CSandboxProbe"),
        // The worker side of `metascrub serve` and `clean --sandbox`: enter the sandbox, clean or scan one file,
        // write the JSON report. No HTTP here.
        .target(name: "MetascrubSandbox", dependencies: ["Metascrub", "MetascrubCore", "MetascrubFormats", "MetascrubNative", "CSandbox"]),
        // `metascrub serve`: the HTTP service over worker processes. The only target that depends on Hummingbird.
        .target(
            name: "MetascrubServe",
            dependencies: [
                "Metascrub", "MetascrubCore", "MetascrubFormats", "MetascrubSandbox", "CSandbox", .product(name: "Yams", package: "Yams"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "HummingbirdCore", package: "hummingbird"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTPTypes", package: "swift-nio-extras"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOHTTPTypesHTTP1", package: "swift-nio-extras"),
            ]
        ),

        // The command line: a thin layer over `Metascrub`. No networking code: `metascrub serve` execs the
        // metascrub-serve binary installed beside it, and the workers it starts are this binary (`worker`).
        .executableTarget(
            name: "metascrub",
            dependencies: [
                "Metascrub", "MetascrubCore", "MetascrubFormats", "MetascrubSandbox", "CSandbox",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            swiftSettings: staticRuntimeSwiftSettings,
            linkerSettings: staticRuntimeLinkerSettings
        ),
        // `metascrub serve`'s own binary: the HTTP server (Hummingbird, SwiftNIO). Kept out of `metascrub` so the
        // CLI and every worker link no socket code, and so the CLI's start-up does not pay for NIO.
        .executableTarget(
            name: "metascrub-serve",
            dependencies: [
                "Metascrub", "MetascrubCore", "MetascrubServe", "MetascrubSandbox", "CSandbox", "CSandboxProbe",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            swiftSettings: staticRuntimeSwiftSettings,
            linkerSettings: staticRuntimeLinkerSettings
        ),

        .testTarget(name: "MetascrubCoreTests", dependencies: ["MetascrubCore"]),
        .testTarget(name: "MetascrubNativeTests", dependencies: ["MetascrubNative"]),
        .testTarget(name: "MetascrubFormatsTests", dependencies: ["MetascrubFormats", "Metascrub"]),
        .testTarget(name: "MetascrubCLITests", dependencies: ["Metascrub"]),
        // The engine's promises under failure (issue 8): injected I/O faults, stale temp files.
        .testTarget(name: "MetascrubEngineTests", dependencies: ["Metascrub", "MetascrubCore"]),
        // `metascrub serve` end to end: the real binary on a loopback port, real HTTP clients (curl).
        .testTarget(name: "MetascrubServeTests", dependencies: [.product(name: "Yams", package: "Yams")]),
    ]
)

// libFuzzer targets (issue 8): only when scripts/fuzz asks for them, because the entry point has no `main`
// until it is linked with `-sanitize=fuzzer`.
if Context.environment["METASCRUB_FUZZ"] == "1" {
    package.targets.append(.executableTarget(
        name: "MetascrubFuzz", dependencies: ["MetascrubCore", "MetascrubFormats"], path: "Fuzz/MetascrubFuzz"))
}
