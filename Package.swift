// swift-tools-version:6.0
import PackageDescription

let package = Package(
    name: "issues",
    platforms: [.macOS(.v15)],
    products: [
        .library(name: "Newsstand", targets: ["Newsstand"]),
        // Covers need libvips and poppler (libvips-dev, libpoppler-glib-dev): a product of its own, so that a
        // package depending on `Newsstand` alone builds without them.
        .library(name: "NewsstandCovers", targets: ["NewsstandCovers"]),
        .executable(name: "issues", targets: ["issues"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", .upToNextMinor(from: "1.8.2")),
        .package(url: "https://github.com/swift-server/async-http-client", from: "1.37.0"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-nio-ssl", from: "2.37.6"),
        // Test support only (an HTTP/2 test server); AsyncHTTPClient depends on it already.
        .package(url: "https://github.com/apple/swift-nio-http2", from: "1.36.0"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-crypto", from: "3.12.3"),
        // `issues serve` only: the NewsstandServer target uses them, the `Newsstand` product does not.
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.1"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
        .package(url: "https://github.com/apple/swift-http-types", from: "1.8.0"),
        // The catalog's database (SQLite through Debian's libsqlite3-dev).
        .package(url: "https://github.com/groue/GRDB.swift", from: "7.10.0"),
        // `make docs` only: a command plugin (`swift package generate-documentation`). No target depends on it,
        // so it adds no product and no build step for a package that depends on this one.
        .package(url: "https://github.com/swiftlang/swift-docc-plugin", from: "1.5.0"),
    ],
    targets: [
        // MARK: - C wrapper
        .systemLibrary(
            name: "CLibArchive",
            pkgConfig: "libarchive",
            providers: [.apt(["libarchive-dev"])]
        ),

        // Image decoding and resizing (libvips) and PDF pages (poppler-glib with cairo): only NewsstandCovers
        // imports them.
        .systemLibrary(
            name: "CVips",
            pkgConfig: "vips",
            providers: [.apt(["libvips-dev"])]
        ),
        .systemLibrary(
            name: "CPoppler",
            pkgConfig: "poppler-glib",
            providers: [.apt(["libpoppler-glib-dev"])]
        ),

        // Linux calls Swift's Glibc module does not import.
        .systemLibrary(name: "CSystemShims"),

        // MARK: - Library, one target per layer
        // Each layer imports only the layers below it (the README's developer map draws the graph); a
        // back-edge is a build error. Dependents name only the `Newsstand` product, which re-exports the
        // layers its API shows.

        // Primitives and the model: durable files, locks, the errno path, JSON reading and writing, HTTP
        // header parsing, issues, assets, dates, names, errors.
        .target(
            name: "NewsstandCore",
            dependencies: [
                "CSystemShims",
                .product(name: "Crypto", package: "swift-crypto"),
            ]
        ),
        // Unpacking: libarchive, the path policy, limits, staging.
        .target(
            name: "NewsstandArchive",
            dependencies: ["NewsstandCore", "CLibArchive", "CSystemShims"]
        ),
        // The catalog: its SQLite database, changes, events, upgrade, verify's checks, removal.
        .target(
            name: "NewsstandCatalog",
            dependencies: [
                "NewsstandCore", "NewsstandArchive", "CSystemShims",
                .product(name: "GRDB", package: "GRDB.swift"),
                // SQLite's C API, for the loops that read 100,000 rows (`list`): columns as bytes, no value per cell.
                .product(name: "GRDBSQLite", package: "GRDB.swift"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // The HTTP engine and a download run: resume, segments, placing and unpacking.
        .target(
            name: "NewsstandDownload",
            dependencies: [
                "NewsstandCore", "NewsstandArchive", "NewsstandCatalog", "CSystemShims",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Crypto", package: "swift-crypto"),
            ]
        ),
        // The feed parsers: pure functions of bytes (no files, no network).
        .target(
            name: "NewsstandFeeds",
            dependencies: ["NewsstandCore"]
        ),
        // Subscription records and their store, the identity merge, OPML.
        .target(
            name: "NewsstandSubscriptions",
            dependencies: ["NewsstandCore", "NewsstandCatalog", "NewsstandFeeds"]
        ),
        // The machine-readable shapes: one set of `Codable` report types for every `--json` output, the sidecar,
        // the events and the HTTP API.
        .target(
            name: "NewsstandReports",
            dependencies: ["NewsstandCore", "NewsstandCatalog", "NewsstandFeeds", "NewsstandSubscriptions"]
        ),
        // Events out: following the event log, and delivering its events to hooks (programs, webhooks).
        .target(
            name: "NewsstandEvents",
            dependencies: [
                "NewsstandCore", "NewsstandCatalog", "NewsstandReports",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Crypto", package: "swift-crypto"),
                // The webhook's request (its method, body and status).
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
            ]
        ),
        // The façade: the `Library` actor and its public API.
        .target(
            name: "Newsstand",
            dependencies: [
                "NewsstandCore", "NewsstandArchive", "NewsstandCatalog", "NewsstandDownload", "NewsstandFeeds",
                "NewsstandSubscriptions", "NewsstandReports", "NewsstandEvents",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),

        // Covers: an issue's cover and thumbnails from its feed image, EPUB, archive or PDF, else a placeholder.
        // Above the façade (it implements `Newsstand.CoverMaking`), so the façade holds no image library.
        .target(
            name: "NewsstandCovers",
            dependencies: [
                "Newsstand", "NewsstandCore", "NewsstandArchive", "NewsstandFeeds", "CSystemShims", "CVips", "CPoppler",
            ]
        ),

        // The resident service: the scheduler that keeps subscriptions current, the single-instance lock,
        // systemd's notify protocol and unit file. No server framework: `issues serve` adds HTTP on top.
        .target(
            name: "NewsstandService",
            dependencies: [
                "Newsstand", "NewsstandCore", "NewsstandSubscriptions",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
            ]
        ),

        // MARK: - The web server
        // `issues serve`: pages, the JSON API, feeds out. Its own target so that a package depending on the
        // `Newsstand` product never builds Hummingbird.
        .target(
            name: "NewsstandServer",
            dependencies: [
                "Newsstand", "NewsstandCore", "NewsstandCatalog", "NewsstandDownload",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "NIOCore", package: "swift-nio"),
            ],
            // The committed OpenAPI document; OpenAPIDocument.swift carries the same bytes (a test compares).
            exclude: ["API/openapi.json"]
        ),

        // MARK: - Command line
        .executableTarget(
            name: "issues",
            dependencies: [
                "Newsstand", "NewsstandCore", "NewsstandService", "NewsstandServer", "NewsstandCovers",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
            ]
        ),

        // MARK: - Test support and samples
        .target(
            name: "NewsstandTestSupport",
            dependencies: [
                "CLibArchive",
                "NewsstandCore",  // the library's HTTP-date code (package access), so server and client agree
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "NIOHTTP2", package: "swift-nio-http2"),
                .product(name: "Crypto", package: "swift-crypto"),
            ]
        ),
        .executableTarget(
            name: "sample-server",
            dependencies: ["NewsstandTestSupport"],
            path: "Samples/SampleServer"
        ),
        .executableTarget(
            name: "sample-reader",
            dependencies: ["Newsstand"],
            path: "Samples/SampleReader"
        ),
        // The README's API example, byte for byte (a test compares them and runs it).
        .executableTarget(
            name: "api-sample",
            dependencies: ["Newsstand"],
            path: "Samples/API"
        ),

        // MARK: - Fuzz targets
        // One per parser of outside data, each depending on the layer it fuzzes. `make fuzz` builds them with
        // libFuzzer and ASan (`-DFUZZING`); the everyday build makes each a replayer of its seed corpus.
        .target(name: "FuzzSupport", path: "Fuzz/Support"),
        .executableTarget(name: "FuzzJSONReader", dependencies: ["FuzzSupport", "NewsstandCore"], path: "Fuzz/JSONReader"),
        .executableTarget(name: "FuzzCatalogRecord", dependencies: ["FuzzSupport", "NewsstandCatalog"], path: "Fuzz/CatalogRecord"),
        .executableTarget(name: "FuzzContentRange", dependencies: ["FuzzSupport", "NewsstandCore"], path: "Fuzz/ContentRange"),
        .executableTarget(name: "FuzzRetryAfter", dependencies: ["FuzzSupport", "NewsstandCore"], path: "Fuzz/RetryAfter"),
        .executableTarget(name: "FuzzContentDisposition", dependencies: ["FuzzSupport", "NewsstandCore"], path: "Fuzz/ContentDisposition"),
        .executableTarget(name: "FuzzArchivePath", dependencies: ["FuzzSupport", "NewsstandArchive"], path: "Fuzz/ArchivePath"),
        .executableTarget(name: "FuzzFeedParser", dependencies: ["FuzzSupport", "NewsstandFeeds"], path: "Fuzz/FeedParser"),
        .executableTarget(name: "FuzzCoverImage", dependencies: ["FuzzSupport", "NewsstandCovers"], path: "Fuzz/CoverImage"),

        // MARK: - Tests
        // Pure logic, no network, processes or file-system fixtures beyond the golden feeds: parsers, models,
        // the merge and the plans.
        .testTarget(
            name: "NewsstandUnitTests",
            dependencies: ["Newsstand", "NewsstandCore", "NewsstandArchive", "NewsstandCatalog", "NewsstandDownload", "NewsstandFeeds", "NewsstandSubscriptions", "NewsstandTestSupport"],
            // Read from the source tree by path (the fixtures are compared byte for byte).
            exclude: ["Fixtures"]
        ),
        // The library against the NIO test server, real files, archives and tmpfs (with @testable).
        .testTarget(
            name: "NewsstandIntegrationTests",
            dependencies: ["Newsstand", "NewsstandCore", "NewsstandArchive", "NewsstandCatalog", "NewsstandDownload", "NewsstandFeeds", "NewsstandSubscriptions", "NewsstandTestSupport", "NewsstandCovers"],
            // Read from the source tree by path (a copied library must keep its exact bytes).
            exclude: ["Fixtures"]
        ),
        // The test support's own checks: the test server keeps the promises the other tests rely on.
        .testTarget(
            name: "NewsstandTestSupportTests",
            dependencies: ["NewsstandTestSupport"]
        ),
        .testTarget(
            name: "IssuesCLITests",
            dependencies: ["issues", "Newsstand", "NewsstandTestSupport"],
            exclude: ["Fixtures/pty_screen.py", "Fixtures/make_v3_library.py"]  // run by path (#filePath), not resources
        ),
        // The scheduler and the service: a simulated week against real loopback feeds, the plan's rules.
        .testTarget(
            name: "NewsstandServiceTests",
            dependencies: [
                "NewsstandService", "Newsstand", "NewsstandCore", "NewsstandSubscriptions", "NewsstandTestSupport",
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // `issues serve` over real HTTP on an ephemeral loopback port.
        .testTarget(
            name: "NewsstandServerTests",
            dependencies: [
                "NewsstandServer", "Newsstand", "NewsstandCatalog", "NewsstandCore", "NewsstandTestSupport",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // The public API as a dependent sees it: `import Newsstand`, never `@testable`.
        .testTarget(
            name: "NewsstandAPITests",
            dependencies: [
                "Newsstand", "NewsstandTestSupport", "api-sample",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "InMemoryLogging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
            ]
        ),
    ]
)

// Settings every target shares (the swift-log pattern): Swift 6 mode is the tools-version default;
// these catch existential and import mistakes early.
for target in package.targets where target.type != .system {
    var settings = target.swiftSettings ?? []
    settings.append(.enableUpcomingFeature("ExistentialAny"))
    settings.append(.enableUpcomingFeature("MemberImportVisibility"))
    // No unsafe flags here: SwiftPM refuses them in a package that others depend on by version. The
    // stricter `-require-explicit-sendable` check runs from the command line instead (`make strict-check`).
    target.swiftSettings = settings
}
