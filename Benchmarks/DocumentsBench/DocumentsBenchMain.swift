import BenchSupport
import Bus
import Contracts
import Foundation
import Logging
import TestSupport

/// `documents-bench`: the real Documents executable on a fresh database of the throwaway cluster
/// (`DATABASE_URL`; `deploy/bench-documents` starts one), once per byte store in one run, with the
/// same file: PostgreSQL large objects, then S3 (a SeaweedFS `weed server -s3` started here).
/// For each it measures upload and download MB/s for one large file over the bus in 1 MiB chunks
/// (tus-style: one chunk at a time for the upload; downloads with 1 and 4 chunks in flight,
/// SHA-256 checked), random 64 KiB range reads per second (median of rounds), and how much every
/// process in the path grew during the transfers (``MemoryWatch``); then prints both side by side
/// and fails (exit 1) when any process grew by 64 MiB or more.
///
/// Options: `--size-mb N` (default 1024), `--rounds N` (3), `--seconds N` per range round (5),
/// `--in-flight N` range reads at once (16), `--only postgres|s3`.
@main
struct DocumentsBenchMain {
    static func main() async {
        do { try await run() } catch {
            FileHandle.standardError.write(Data("documents-bench: \(error)\n".utf8))
            exit(1)
        }
    }

    static let chunk = 1 << 20
    static let growthLimitMB = 64.0

    static func run() async throws {
        let options = BackendRun.Options(
            length: Int64(BenchArguments.int("--size-mb", default: 1024)) * Int64(chunk), chunk: chunk,
            rounds: BenchArguments.int("--rounds", default: 3), seconds: BenchArguments.int("--seconds", default: 5),
            inFlight: BenchArguments.int("--in-flight", default: 16))
        let only = CommandLine.arguments.firstIndex(of: "--only").flatMap { CommandLine.arguments.dropFirst($0 + 1).first }
        let backends: [String] = ["postgres", "s3"].filter { only == nil || $0 == only }
        print("documents-bench: \(options.length >> 20) MiB file, \(chunk >> 10) KiB chunks, backends \(backends.joined(separator: ", "))")
        var results: [BackendRun.Figures] = []
        for backend in backends {
            let figures = try await backend == "s3" ? BackendRun.s3(options) : BackendRun.postgres(options)
            results.append(figures)
        }
        let exceeded = printTable(results, options: options)
        if !exceeded.isEmpty {
            print("RSS growth over \(Int(growthLimitMB)) MiB: \(exceeded.joined(separator: ", "))")
            exit(1)
        }
        print("RSS growth check: every process under \(Int(growthLimitMB)) MiB on every backend")
    }

    /// The figures side by side; returns the processes that grew past the limit.
    static func printTable(_ results: [BackendRun.Figures], options: BackendRun.Options) -> [String] {
        let megabytes = Double(options.length) / 1_000_000
        func row(_ label: String, _ cell: (BackendRun.Figures) -> String) {
            print(label.padding(toLength: 42, withPad: " ", startingAt: 0) + results.map { cell($0).leftPad(16) }.joined())
        }
        print("")
        row("figure") { $0.backend }
        row("upload MB/s (one committed chunk at a time)") { String(format: "%.1f", megabytes / $0.uploadSeconds) }
        row("download MB/s, 1 chunk in flight") { String(format: "%.1f", megabytes / $0.download1Seconds) }
        row("download MB/s, 4 chunks in flight") { String(format: "%.1f", megabytes / $0.download4Seconds) }
        row("random 64 KiB reads/s (median)") { String(format: "%.0f", $0.rangeReadsPerSecond) }
        var exceeded: [String] = []
        let names = results.flatMap { $0.growth.map(\.name) }.reduce(into: [String]()) { if !$0.contains($1) { $0.append($1) } }
        for name in names {
            row("RSS growth MiB: \(name)") { figures in
                guard let growth = figures.growth.first(where: { $0.name == name }) else { return "-" }
                if growth.growthMB >= growthLimitMB { exceeded.append("\(name) on \(figures.backend)") }
                return String(format: "%.1f (%.0f→%.0f)", growth.growthMB, growth.idleMB, growth.peakMB)
            }
        }
        return exceeded
    }
}

extension String {
    fileprivate func leftPad(_ width: Int) -> String { count >= width ? " " + self : String(repeating: " ", count: width - count) + self }
}
