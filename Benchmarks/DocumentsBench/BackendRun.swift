import Bus
import Contracts
import Foundation
import Logging
import TestSupport

/// One backend's measurements: Documents on a fresh database, new uploads on that backend.
enum BackendRun {
    struct Options: Sendable {
        let length: Int64
        let chunk: Int
        let rounds: Int
        let seconds: Int
        let inFlight: Int
    }

    struct Figures: Sendable {
        let backend: String
        let uploadSeconds: Double
        let download1Seconds: Double
        let download4Seconds: Double
        let rangeReadsPerSecond: Double
        let growth: [MemoryWatch.Growth]
    }

    static func postgres(_ options: Options) async throws -> Figures {
        try await measure("postgres", options, storage: ["DOCUMENTS_STORAGE": "postgres"], extraProcesses: [])
    }

    /// A SeaweedFS of its own (data in a temporary folder), its bucket, and Documents pointed at it.
    static func s3(_ options: Options) async throws -> Figures {
        let server = try await SeaweedFS.start(bucket: "bench")
        defer { server.kill() }
        let storage = [
            "DOCUMENTS_STORAGE": "s3", "DOCUMENTS_S3_ENDPOINT": server.endpoint.absoluteString, "DOCUMENTS_S3_REGION": "us-east-1",
            "DOCUMENTS_S3_BUCKET": server.bucket, "DOCUMENTS_S3_ACCESS_KEY_ID": server.accessKeyID,
            "DOCUMENTS_S3_SECRET_ACCESS_KEY": server.secretAccessKey, "DOCUMENTS_S3_PATH_STYLE": "true",
        ]
        let pidText = try String(contentsOf: server.directory.appendingPathComponent("weed.pid"), encoding: .utf8)
        guard let weed = Int32(pidText.trimmingCharacters(in: .whitespacesAndNewlines)) else { throw TestSupportError("no weed pid") }
        return try await measure("s3 (SeaweedFS)", options, storage: storage, extraProcesses: [("SeaweedFS (weed)", weed)])
    }

    static func measure(
        _ backend: String, _ options: Options, storage: [String: String], extraProcesses: [(String, Int32)]
    ) async throws -> Figures {
        try await TestDatabase.withDatabase { database in
            let rpc = ipcEndpoint()
            var environment = ServiceEnvironment.make(
                databaseURL: database.url, rpc: rpc, logLevel: ProcessInfo.processInfo.environment["BENCH_SERVICE_LOG_LEVEL"] ?? "error")
            environment["DOCUMENTS_MAX_FILE_SIZE"] = "\(options.length)"
            environment["DOCUMENTS_USER_QUOTA"] = "\(options.length * 2)"
            environment["ACCOUNTS_RPC_ENDPOINTS"] = ipcEndpoint()
            environment["ACCOUNTS_EVENTS_ENDPOINTS"] = ipcEndpoint()
            environment.merge(storage) { _, own in own }
            let service = try await PeerProcess("Documents", environment: environment)
            defer {
                service.signal(SIGTERM)
                service.process.waitUntilExit()
            }
            var logger = Logger(label: "documents-bench")
            logger.logLevel = .error
            var clientOptions = RPCClientOptions()
            clientOptions.defaultTimeout = .seconds(120)
            let client = try await RPCClient.connect(to: "documents", endpoints: [rpc], options: clientOptions, logger: logger)
            defer { Task { await client.close() } }
            let owner = UUID()
            let transfer = Transfer(client: client, principal: Principal.user(owner.uuidString.lowercased()), chunk: options.chunk)

            // Warm up (connections, prepared paths, a multipart upload), then take the idle figures.
            let warmLength = 12 * Int64(options.chunk)
            let warm = try await transfer.upload(owner: owner, length: warmLength)
            _ = try await transfer.download(warm.id, length: warmLength, inFlight: 4)
            try await Task.sleep(for: .seconds(1))
            let watch = try await MemoryWatch(
                processes: [("Documents", service.process.processIdentifier)] + extraProcesses, pool: database.pool)
            let sampling = Task { await watch.run() }

            print("\(backend): uploading \(options.length >> 20) MiB…")
            let clock = ContinuousClock()
            var start = clock.now
            let document = try await transfer.upload(owner: owner, length: options.length)
            let uploadSeconds = (clock.now - start).inSeconds
            start = clock.now
            let digest1 = try await transfer.download(document.id, length: options.length, inFlight: 1)
            let download1 = (clock.now - start).inSeconds
            start = clock.now
            let digest4 = try await transfer.download(document.id, length: options.length, inFlight: 4)
            let download4 = (clock.now - start).inSeconds
            let growth = try watch.finish()
            await sampling.value
            guard digest1 == document.sha256, digest4 == document.sha256 else {
                throw TestSupportError("\(backend): downloaded SHA-256 differs from the stored one")
            }
            var rates: [Double] = []
            for _ in 0..<max(options.rounds, 1) {
                rates.append(
                    try await transfer.randomReads(
                        document.id, length: options.length, size: 64 << 10, inFlight: options.inFlight, for: .seconds(options.seconds)))
            }
            let median = rates.sorted()[rates.count / 2]
            print(
                String(
                    format: "%@: upload %.1f s, downloads %.1f s and %.1f s, range rounds %@", backend, uploadSeconds, download1, download4,
                    rates.map { String(format: "%.0f/s", $0) }.joined(separator: ", ")))
            return Figures(
                backend: backend, uploadSeconds: uploadSeconds, download1Seconds: download1, download4Seconds: download4,
                rangeReadsPerSecond: median, growth: growth)
        }
    }
}
