// swift-tools-version:6.1
// Recruiting Compass backend: separate service executables that talk over ZeroMQ and persist to
// PostgreSQL through libpq. Layout and contracts: ../shared/DESIGN.md and README.md.
//
// The dependency list is deliberate: CI builds every dependency from a fresh clone on 2 cores.
// SwiftNIO comes with Hummingbird: the gateway's API and every process's health server (the image
// ships one multicall binary holding the gateway, so each process links NIO anyway; the bus and
// the database stay on libzmq and libpq).
import PackageDescription

let strict: [SwiftSetting] = [
    .swiftLanguageMode(.v6),
    .enableUpcomingFeature("ExistentialAny"),
]

let package = Package(
    name: "RecruitingCompass",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "bus-bench", targets: ["BusBench"]),
        .executable(name: "audit-bench", targets: ["AuditBench"]),
        .executable(name: "compass", targets: ["compass"]),
        .executable(name: "recruiting-compass", targets: ["MultiCall"]),
        .executable(name: "documents-bench", targets: ["DocumentsBench"]),
        .executable(name: "identity-bench", targets: ["IdentityBench"]),
    ],
    // Exact versions: an application builds what it was tested with. Package.resolved would pin
    // the transitive packages too, but it is not committed: the package mirror these machines
    // build from gives other commit ids than GitHub's (ARCHITECTURE.md, "Dependencies").
    dependencies: [
        .package(url: "https://github.com/apple/swift-log.git", exact: "1.16.2"),
        .package(url: "https://github.com/apple/swift-metrics.git", exact: "2.13.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus.git", exact: "2.4.1"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle.git", exact: "2.13.0"),
        // SHA-256 of legal texts, the audit hash chain, Ed25519 receipt and checkpoint signatures.
        .package(url: "https://github.com/apple/swift-crypto.git", exact: "4.5.2"),
        // The `compass` operator CLI's commands and flags.
        .package(url: "https://github.com/apple/swift-argument-parser.git", exact: "1.8.2"),
        // Latency percentiles in the benchmarks.
        .package(url: "https://github.com/HdrHistogram/hdrhistogram-swift.git", exact: "0.2.0"),
        // The HTTP gateway and the health servers (ServiceKit). Default traits off but
        // FullFoundation, so swift-configuration is not built.
        .package(url: "https://github.com/hummingbird-project/hummingbird.git", exact: "2.28.1", traits: ["FullFoundation"]),
        // Already part of Hummingbird's graph; named for `HTTPField.Name` (custom header names).
        .package(url: "https://github.com/apple/swift-http-types.git", exact: "1.8.0"),
        // Already part of Hummingbird's graph; named for the gateway's connection guard (a
        // channel handler: `SlowClientGuard`).
        .package(url: "https://github.com/apple/swift-nio.git", exact: "2.101.3"),
        .package(url: "https://github.com/apple/swift-nio-extras.git", exact: "1.35.2"),
        // JWS/JWT/JWK parsing, signing and verification (Shared/Identity): Sign in with Apple's
        // identity tokens and client secret, our session tokens. Brings swift-certificates,
        // swift-asn1 and swift-extras-base64.
        .package(url: "https://github.com/vapor/jwt-kit.git", exact: "5.8.0"),
        // Already part of jwt-kit's graph; named for the strict base64url check of token segments,
        // refresh tokens and sealed envelopes (Shared/Identity/JWT/Base64URL.swift).
        .package(url: "https://github.com/swift-extras/swift-extras-base64", exact: "1.2.0"),
    ],
    targets: [
        // MARK: C libraries
        .systemLibrary(
            name: "CZeroMQ", path: "Shared/CZeroMQ", pkgConfig: "libzmq",
            providers: [.apt(["libzmq3-dev"])]),
        .systemLibrary(
            name: "CLibPQ", path: "Shared/CLibPQ", pkgConfig: "libpq",
            providers: [.apt(["libpq-dev"])]),

        // MARK: Shared libraries
        // The lock every module uses instead of `Synchronization.Mutex`, which ThreadSanitizer
        // cannot see on Linux; `deploy/tsan`.
        .target(name: "Locks", path: "Shared/Locks", swiftSettings: strict),
        .target(name: "Hex", path: "Shared/Hex", swiftSettings: strict),
        // Every POSIX call through one helper: EINTR retried, a failure named after its call with
        // its errno (in the style of swift-nio's System.swift). Bus, Postgres and ServiceKit use it.
        .target(name: "SystemCall", path: "Shared/SystemCall", swiftSettings: strict),
        // Retry policies as values (`Backoff`) and the "debug first, then warn" rule for a loop's
        // failures in a row (`FailureStreak`): every retrying loop of the product uses these.
        .target(
            name: "Retry", dependencies: [.product(name: "Logging", package: "swift-log")], path: "Shared/Retry",
            swiftSettings: strict),
        // Dates as day counts and back, for the bus's and PostgreSQL's timestamp texts.
        .target(name: "CivilCalendar", path: "Shared/CivilCalendar", swiftSettings: strict),
        // The bus's messages without its transport: the envelope and its binary and JSON forms,
        // frames, payload coding, errors, principals, message ids and method descriptions. No C
        // library: `Contracts` depends on this alone (`Tests/Deploy/test_layering.py`).
        .target(name: "BusCore", dependencies: ["Locks", "Hex", "CivilCalendar"], path: "Shared/BusCore", swiftSettings: strict),
        // The transport: libzmq sockets, the socket loop, RPC client and server, publish/subscribe
        // and CurveZMQ. Re-exports BusCore.
        .target(
            name: "Bus",
            dependencies: [
                "BusCore", "CZeroMQ", "Locks", "Hex", "SystemCall", "Retry",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"),
            ], path: "Shared/Bus", swiftSettings: strict),
        .target(
            name: "Postgres",
            dependencies: [
                "CLibPQ", "Locks", "Hex", "CivilCalendar", "SystemCall",
                .product(name: "Logging", package: "swift-log"),
                // SHA-256 of migration files.
                .product(name: "Crypto", package: "swift-crypto"),
            ], path: "Shared/Postgres", swiftSettings: strict),
        // PostgREST's query language in one place: the parsed query (a bus payload), its parser,
        // the SQL the services make of it and the in-memory evaluator the gateway runs it with.
        .target(name: "RestQueryKit", dependencies: ["BusCore", "CivilCalendar"], path: "Shared/RestQueryKit", swiftSettings: strict),
        .target(
            name: "Contracts", dependencies: ["BusCore", "Hex", "RestQueryKit"], path: "Shared/Contracts",
            swiftSettings: strict),
        // Documents' bytes in S3-compatible storage: SigV4 over Foundation's URLSession (libcurl),
        // no SwiftNIO and no new package (Shared/ObjectStorage/README.md says why).
        .target(
            name: "ObjectStorage",
            dependencies: [
                "CivilCalendar",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
            ], path: "Shared/ObjectStorage", exclude: ["README.md"], swiftSettings: strict),
        .target(
            name: "ServiceKit",
            dependencies: [
                "Bus", "BusCore", "Postgres", "Contracts", "SystemCall", "Retry", "Locks",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                // /healthz, /readyz and /metrics (ARCHITECTURE.md: every process links NIO anyway).
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTPTypes", package: "swift-nio-extras"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
            ], path: "Shared/ServiceKit", swiftSettings: strict),

        .target(
            name: "Identity",
            dependencies: [
                "Hex",
                .product(name: "JWTKit", package: "jwt-kit"),
                .product(name: "ExtrasBase64", package: "swift-extras-base64"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "_CryptoExtras", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
            ], path: "Shared/Identity", exclude: ["README.md"], swiftSettings: strict),
        // Closed- and open-loop load with HdrHistogram latencies, and the pgbench baseline: what
        // `compass load` and the benchmarks both use.
        .target(
            name: "LoadKit",
            dependencies: [
                "Bus",
                .product(name: "Histogram", package: "hdrhistogram-swift"),
            ], path: "Shared/LoadKit", swiftSettings: strict),

        // MARK: Services
        .target(
            name: "LegalService",
            dependencies: [
                "Bus", "Postgres", "Contracts", "ServiceKit",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
            ], path: "Services/Legal/Service",
            resources: [.copy("Migrations"), .copy("DefaultTexts")], swiftSettings: strict),
        .executableTarget(
            name: "Legal", dependencies: ["LegalService", "ServiceKit"], path: "Services/Legal/Main",
            swiftSettings: strict),
        .target(
            name: "AuditService",
            dependencies: [
                "Bus", "Contracts", "Postgres", "ServiceKit", "Hex", "Retry",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ], path: "Services/Audit/Service", resources: [.copy("Migrations")], swiftSettings: strict),
        .executableTarget(
            name: "Audit", dependencies: ["AuditService", "ServiceKit"], path: "Services/Audit/Main", swiftSettings: strict),

        .target(
            name: "AccountsService",
            dependencies: [
                "Bus", "Contracts", "Postgres", "ServiceKit", "Identity", "Hex", "Locks", "Retry",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Metrics", package: "swift-metrics"),
            ], path: "Services/Accounts/Service", resources: [.copy("Migrations"), .copy("Rules")], swiftSettings: strict),
        .executableTarget(
            name: "Accounts", dependencies: ["AccountsService", "ServiceKit"], path: "Services/Accounts/Main",
            swiftSettings: strict),

        // MARK: Operator CLI
        // The commands live in a library so the multicall binary can hold them too.
        .target(
            name: "CompassCLI",
            dependencies: [
                "Bus", "Contracts", "ServiceKit", "LoadKit", "Postgres", "Identity", "Retry",
                // compass documents migrate-storage: Documents' own settings, the S3 client, SHA-256.
                "DocumentsService", "ObjectStorage", .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ], path: "Services/Compass", exclude: ["Main"], swiftSettings: strict),
        .executableTarget(name: "compass", dependencies: ["CompassCLI"], path: "Services/Compass/Main", swiftSettings: strict),

        // MARK: The image's one binary
        // Every shipped executable in one binary that its name picks (`recruiting-compass`;
        // deploy/Dockerfile says why). The per-executable products stay: `compass up`,
        // `deploy/run` and the tests start them by name from the build folder.
        .executableTarget(
            name: "MultiCall",
            dependencies: ["LegalService", "AuditService", "AccountsService", "DocumentsService", "GatewayAssembly", "CompassCLI"],
            path: "Services/MultiCall", swiftSettings: strict),
        // MARK: Documents
        .target(
            name: "DocumentsService",
            dependencies: [
                "Bus", "Contracts", "Identity", "Postgres", "ServiceKit", "Hex", "ObjectStorage",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ], path: "Services/Documents/Service", resources: [.copy("Migrations")], swiftSettings: strict),
        .executableTarget(
            name: "Documents", dependencies: ["DocumentsService", "ServiceKit"], path: "Services/Documents/Main",
            swiftSettings: strict),
        .executableTarget(
            name: "DocumentsBench",
            dependencies: [
                "Bus", "Contracts", "Postgres", "TestSupport", "Documents", "LoadKit", "BenchSupport",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
            ], path: "Benchmarks/DocumentsBench", swiftSettings: strict),
        .testTarget(
            name: "DocumentsTests",
            dependencies: [
                "DocumentsService", "Documents", "Accounts", "Legal", "Audit", "compass", "Contracts", "Bus", "Postgres", "TestSupport",
                .product(name: "Crypto", package: "swift-crypto"),
            ], path: "Tests/DocumentsTests", swiftSettings: strict),
        // MARK: Gateway
        .target(
            name: "GatewayService",
            dependencies: [
                "Bus", "Contracts", "ServiceKit", "Identity", "Locks", "Hex", "CivilCalendar",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTPTypes", package: "swift-nio-extras"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ], path: "Services/Gateway/Service", swiftSettings: strict),
        // The Supabase-compatible API (GoTrue, PostgREST, Storage, the anon key) as a route module
        // of the core: the core knows it only as a `RouteModule`.
        .target(
            name: "GatewaySupabase",
            dependencies: [
                "GatewayService", "Bus", "Contracts", "ServiceKit", "Identity", "Locks",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Logging", package: "swift-log"),
            ], path: "Services/Gateway/Supabase", swiftSettings: strict),
        // The gateway process: the core wired with the modules it serves, its settings and flags.
        .target(
            name: "GatewayAssembly", dependencies: ["GatewayService", "GatewaySupabase", "ServiceKit"], path: "Services/Gateway/Assembly",
            swiftSettings: strict),
        .executableTarget(
            name: "Gateway", dependencies: ["GatewayAssembly"], path: "Services/Gateway/Main",
            swiftSettings: strict),

        // MARK: Benchmarks
        .executableTarget(
            name: "BusBench", dependencies: ["Bus", "BusCore", "Contracts", "CZeroMQ"], path: "Benchmarks/BusBench",
            swiftSettings: strict),

        // Session-token and Apple identity-token signing and verification, ns/op.
        .executableTarget(
            name: "IdentityBench",
            dependencies: [
                "Identity", "BenchSupport",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "_CryptoExtras", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
            ], path: "Benchmarks/IdentityBench", swiftSettings: strict),

        // The benchmarks' command-line options.
        .target(name: "BenchSupport", path: "Benchmarks/BenchSupport", swiftSettings: strict),
        .executableTarget(
            name: "AuditBench",
            dependencies: [
                "Bus", "Contracts", "Postgres", "TestSupport", "Audit", "LoadKit", "BenchSupport",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Histogram", package: "hdrhistogram-swift"),
                .product(name: "Logging", package: "swift-log"),
            ], path: "Benchmarks/AuditBench", swiftSettings: strict),

        // MARK: Tests
        // ServiceKit: a test database's service roles are made as `compass db roles` makes them.
        // ObjectStorage: SeaweedFS.swift makes its bucket with the client under test.
        .target(
            name: "TestSupport", dependencies: ["Postgres", "Bus", "ServiceKit", "ObjectStorage", "Locks"], path: "Tests/TestSupport",
            swiftSettings: strict),
        // The bus's parsers under libFuzzer (`deploy/fuzz`); built normally, it replays the corpus.
        .target(name: "CFuzzerDriver", path: "Tests/Fuzz/CFuzzerDriver"),
        .executableTarget(
            name: "BusFuzz", dependencies: ["BusCore", "CFuzzerDriver"], path: "Tests/Fuzz/BusFuzz", swiftSettings: strict),
        .executableTarget(
            name: "BusTestPeer", dependencies: ["Bus", "TestSupport"], path: "Tests/Peers/BusTestPeer",
            swiftSettings: strict),
        .executableTarget(
            name: "ExampleService", dependencies: ["Bus", "ServiceKit", "Postgres"], path: "Tests/Peers/ExampleService",
            swiftSettings: strict),
        .testTarget(
            name: "BusTests", dependencies: ["Bus", "BusCore", "CivilCalendar", "TestSupport", "BusTestPeer"],
            path: "Tests/BusTests", swiftSettings: strict),
        // SigV4 against AWS's vectors (pure), the S3 client against a real SeaweedFS.
        .testTarget(
            name: "ObjectStorageTests",
            dependencies: ["ObjectStorage", "TestSupport", .product(name: "Logging", package: "swift-log")],
            path: "Tests/ObjectStorageTests", swiftSettings: strict),
        .testTarget(
            name: "PostgresTests", dependencies: ["Postgres", "TestSupport", "Hex", .product(name: "Crypto", package: "swift-crypto")],
            path: "Tests/PostgresTests", swiftSettings: strict),
        .testTarget(
            name: "AuditTests",
            dependencies: [
                "AuditService", "Audit", "Legal", "Contracts", "Bus", "Postgres", "TestSupport",
                .product(name: "Crypto", package: "swift-crypto"),
            ], path: "Tests/AuditTests", swiftSettings: strict),
        .testTarget(
            name: "ServiceKitTests",
            dependencies: [
                "ServiceKit", "SystemCall", "Retry", "TestSupport", "Bus", "Postgres", "Contracts", "ExampleService",
                .product(name: "NIOCore", package: "swift-nio"),
            ],
            path: "Tests/ServiceKitTests", swiftSettings: strict),
        .testTarget(
            name: "LegalTests",
            dependencies: [
                "LegalService", "Contracts", "Bus", "ServiceKit", "Postgres", "TestSupport", "Legal",
                .product(name: "Logging", package: "swift-log"),
            ],
            path: "Tests/LegalTests", swiftSettings: strict),
        // The default privacy text, checked against the routes and settings of the services it
        // describes: the one test target that reads four services' code.
        .testTarget(
            name: "PrivacyTextTests",
            dependencies: [
                "GatewaySupabase", "GatewayAssembly",
                "LegalService", "GatewayService", "AccountsService", "DocumentsService", "ServiceKit", "Bus",
                .product(name: "Logging", package: "swift-log"),
            ],
            path: "Tests/PrivacyTextTests", swiftSettings: strict),
        // RestQueryKit: the parser, the SQL, the in-memory evaluator, and the two evaluators held
        // together over the same rows in a real PostgreSQL.
        .testTarget(
            name: "RestQueryTests", dependencies: ["RestQueryKit", "BusCore", "Contracts", "Postgres", "TestSupport"],
            path: "Tests/RestQueryTests", swiftSettings: strict),
        // Apple's side of Sign in with Apple for the tests: a key set, identity tokens, notifications.
        .target(
            name: "AppleStandIn",
            dependencies: [
                "Identity", "TestSupport", "Locks",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "_CryptoExtras", package: "swift-crypto"),
            ], path: "Tests/Support/AppleStandIn", swiftSettings: strict),
        .testTarget(
            name: "CompassTests",
            dependencies: ["TestSupport", "Bus", "Identity", "CompassCLI", "compass", "Legal", "Audit", "Accounts", "Documents", "Gateway"],
            path: "Tests/CompassTests", swiftSettings: strict),
        .testTarget(
            name: "IdentityTests",
            dependencies: [
                "Identity",
                .product(name: "JWTKit", package: "jwt-kit"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "_CryptoExtras", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
            ], path: "Tests/IdentityTests", swiftSettings: strict),
        .testTarget(
            name: "AccountsTests",
            dependencies: [
                "AccountsService", "Accounts", "Legal", "Audit", "Contracts", "Bus", "Postgres", "TestSupport", "Identity", "ServiceKit",
                "AppleStandIn",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "_CryptoExtras", package: "swift-crypto"),
            ], path: "Tests/AccountsTests", swiftSettings: strict),
        .testTarget(
            name: "GatewayTests",
            dependencies: [
                "GatewaySupabase", "GatewayAssembly",
                "GatewayService", "Gateway", "Accounts", "Legal", "Audit", "Documents", "Contracts", "Bus", "TestSupport", "Identity", "AppleStandIn",
                "GatewayTestSupport", "Locks", "Hex", "compass",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "_CryptoExtras", package: "swift-crypto"),
            ], path: "Tests/GatewayTests", swiftSettings: strict),

        // The gateway's router in process (HummingbirdTesting's `.router`, no HTTP server): every
        // catalogued route's refusals, error bodies and 503s per family with no backend connected,
        // and success paths with its bus clients connected to one stack of the real services.
        // HummingbirdTesting brings AsyncHTTPClient and swift-nio-ssl into the test build.
        .testTarget(
            name: "GatewayRouterTests",
            dependencies: [
                "GatewaySupabase", "GatewayAssembly",
                "GatewayService", "ServiceKit", "GatewayTestSupport", "TestSupport",
                // The stack the success paths connect to.
                "Legal", "Audit", "Accounts", "Documents", "Gateway",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdTesting", package: "hummingbird"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
            ], path: "Tests/GatewayRouterTests", swiftSettings: strict),

        // MARK: Reliability: faults and attacks against the real executables
        .testTarget(
            name: "ReliabilityTests",
            dependencies: [
                "Legal", "Audit", "Accounts", "Documents", "Gateway", "compass", "Contracts", "Bus", "Postgres", "TestSupport",
                "GatewayTestSupport",
                .product(name: "Crypto", package: "swift-crypto"),
            ], path: "Tests/ReliabilityTests", swiftSettings: strict),

        // MARK: HTTP security: isolation, tokens, share links, bad input, secrets through the gateway
        // The gateway stack harness shared by GatewayTests and SecurityTests.
        .target(
            name: "GatewayTestSupport",
            dependencies: [
                "TestSupport", "Bus", "Contracts", "AppleStandIn", "Locks",
                .product(name: "Crypto", package: "swift-crypto"),
            ], path: "Tests/GatewayTestSupport", swiftSettings: strict),
        .testTarget(
            name: "SecurityTests",
            dependencies: [
                "GatewaySupabase", "GatewayAssembly",
                "GatewayTestSupport", "GatewayService", "Gateway", "Accounts", "Legal", "Audit", "Documents", "Contracts", "Bus", "Postgres",
                "TestSupport", "Identity", "AppleStandIn", "ServiceKit",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
            ], path: "Tests/SecurityTests", swiftSettings: strict),
    ]
)

// `COMPASS_TARGETS=A,B` narrows the package to those targets and what they depend on, and drops
// the products and packages nothing left uses. `deploy/tsan` builds only the bus and Postgres
// tests this way: instrumenting the whole graph (Hummingbird, jwt-kit, every service) took 14 of
// CI's minutes for tests that never load it.
if let roots = Context.environment["COMPASS_TARGETS"] {
    let byName = Dictionary(uniqueKeysWithValues: package.targets.map { ($0.name, $0) })
    var kept = Set<String>()
    var usedPackages = Set<String>()
    var pending = roots.split(separator: ",").map(String.init)
    while let name = pending.popLast() {
        guard let target = byName[name], kept.insert(name).inserted else { continue }
        for dependency in target.dependencies {
            switch dependency {
            case .targetItem(let name, _), .byNameItem(let name, _): pending.append(name)
            case .productItem(_, let package?, _, _): usedPackages.insert(package.lowercased())
            case .productItem: break
            @unknown default: break
            }
        }
    }
    package.targets.removeAll { !kept.contains($0.name) }
    package.products.removeAll()
    package.dependencies.removeAll { dependency in
        guard case .sourceControl(_, let location, _) = dependency.kind else { return false }
        let name = location.split(separator: "/").last.map { String($0.hasSuffix(".git") ? $0.dropLast(4) : $0) } ?? location
        return !usedPackages.contains(name.lowercased())
    }
}
