import BenchSupport
import Bus
import Contracts
import Crypto
import Foundation
import LoadKit
import Logging
import TestSupport

/// `documents-bench`: the real Documents executable on a fresh database of the throwaway cluster
/// (`DATABASE_URL`; `deploy/bench-documents` starts one). Prints upload and download MB/s for one
/// large file over the bus in 1 MiB chunks (tus-style: one chunk at a time for the upload;
/// downloads with 1 and 4 chunks in flight), the service's resident memory at idle and its peak
/// during the transfers (`/proc/<pid>/status` VmRSS and VmHWM, the peak reset through
/// `/proc/<pid>/clear_refs` first), and random 64 KiB range reads per second (median of rounds).
///
/// Options: `--size-mb N` (default 1024), `--rounds N` (3), `--seconds N` per range round (5),
/// `--in-flight N` range reads at once (16).
@main
struct DocumentsBenchMain {
    static func main() async {
        do { try await run() } catch {
            FileHandle.standardError.write(Data("documents-bench: \(error)\n".utf8))
            exit(1)
        }
    }

    static func option(_ name: String, default value: Int) -> Int { BenchArguments.int(name, default: value) }

    static let chunk = 1 << 20

    static func run() async throws {
        let sizeMB = option("--size-mb", default: 1024)
        let rounds = option("--rounds", default: 3)
        let seconds = option("--seconds", default: 5)
        let inFlight = option("--in-flight", default: 16)
        let length = Int64(sizeMB) * Int64(chunk)
        try await TestDatabase.withDatabase { database in
            let rpc = ipcEndpoint()
            var environment = ServiceEnvironment.make(
                databaseURL: database.url, rpc: rpc, logLevel: ProcessInfo.processInfo.environment["BENCH_SERVICE_LOG_LEVEL"] ?? "error")
            environment["DOCUMENTS_MAX_FILE_SIZE"] = "\(length)"
            environment["DOCUMENTS_USER_QUOTA"] = "\(length * 2)"
            environment["ACCOUNTS_RPC_ENDPOINTS"] = ipcEndpoint()
            environment["ACCOUNTS_EVENTS_ENDPOINTS"] = ipcEndpoint()
            let service = try await PeerProcess("Documents", environment: environment)
            defer {
                service.signal(SIGTERM)
                service.process.waitUntilExit()
            }
            let memory = ProcessMemory(pid: service.process.processIdentifier)
            var logger = Logger(label: "documents-bench")
            logger.logLevel = .error
            var options = RPCClientOptions()
            options.defaultTimeout = .seconds(120)
            let client = try await RPCClient.connect(to: "documents", endpoints: [rpc], options: options, logger: logger)
            let owner = UUID()
            let principal = Principal.user(owner.uuidString.lowercased())
            let transfer = Transfer(client: client, principal: principal, chunk: chunk)

            // Warm up (connections, prepared paths), then measure idle memory.
            let warm = try await transfer.upload(owner: owner, length: 8 * Int64(chunk))
            _ = try await transfer.download(warm.id, length: 8 * Int64(chunk), inFlight: 1)
            try await Task.sleep(for: .seconds(1))
            let idle = try memory.residentKB()
            try memory.resetPeak()

            print("documents-bench: \(sizeMB) MiB file, \(chunk >> 10) KiB chunks, service pid \(service.process.processIdentifier)")
            let clock = ContinuousClock()
            var start = clock.now
            let document = try await transfer.upload(owner: owner, length: length)
            let uploadSeconds = (clock.now - start).inSeconds
            start = clock.now
            let digest1 = try await transfer.download(document.id, length: length, inFlight: 1)
            let download1 = (clock.now - start).inSeconds
            start = clock.now
            let digest4 = try await transfer.download(document.id, length: length, inFlight: 4)
            let download4 = (clock.now - start).inSeconds
            let peak = try memory.peakKB()
            guard digest1 == document.sha256, digest4 == document.sha256 else {
                throw TestSupportError("downloaded SHA-256 differs from the stored one")
            }
            let megabytes = Double(length) / 1_000_000
            print(
                String(
                    format: "upload:   %7.1f MB/s (%.1f s, one chunk at a time, each committed before the next)", megabytes / uploadSeconds,
                    uploadSeconds))
            print(
                String(
                    format: "download: %7.1f MB/s with 1 chunk in flight, %.1f MB/s with 4 (SHA-256 checked)", megabytes / download1,
                    megabytes / download4))
            print(
                String(
                    format: "service memory: idle %.1f MB, peak during the transfers %.1f MB: %.1f MB above idle (goal ≤ 64)",
                    Double(idle) / 1024, Double(peak) / 1024, Double(peak - idle) / 1024))

            var rates: [Double] = []
            for round in 1...rounds {
                let rate = try await transfer.randomReads(document.id, length: length, size: 64 << 10, inFlight: inFlight, for: .seconds(seconds))
                rates.append(rate)
                print(String(format: "random 64 KiB reads, round %d: %.0f/s (%d in flight)", round, rate, inFlight))
            }
            let median = rates.sorted()[rates.count / 2]
            print(String(format: "random 64 KiB reads: median %.0f/s over %d rounds (%.1f MB/s)", median, rounds, median * 65_536 / 1_000_000))
            await client.close()
        }
    }
}
