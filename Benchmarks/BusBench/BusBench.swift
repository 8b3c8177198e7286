import Bus
import Foundation
import Logging

/// `swift run -c release bus-bench [--seconds S] [--rounds N]`, or `bus-bench codecs [--rounds N]`
/// (``PayloadCodecRun``: the payload codec against Foundation's on real payloads).
///
/// Prints DEALER/ROUTER round trips per second with the envelope (one caller, 64 and 512 in flight),
/// over tcp and ipc, beside raw libzmq with the same message size measured in the same run, the
/// ratio, and the CPU time per call of each side (client and server together; the raw side's
/// includes its setup and drain, a few percent), once per event loop mode (`--event-loop`; both by
/// default: the A/B of ``BusEventLoopMode``). Each figure is the median of N rounds, raw and
/// envelope rounds interleaved so that machine noise hits both alike.
@main
struct BusBench {
    static func main() async throws {
        var seconds = 2.0
        var rounds = 3
        var only: String?
        var verbose = false
        var idempotent = false
        var inFlightLevels = [1, 64, 512]
        var transports = ["tcp", "ipc"]
        var modes: [BusEventLoopMode] = [.perSocket, .single]
        var arguments = CommandLine.arguments.dropFirst().makeIterator()
        if CommandLine.arguments.dropFirst().first == "codecs" {
            _ = arguments.next()
            if arguments.next() == "--rounds", let count = Int(arguments.next() ?? "") { rounds = count } else { rounds = 7 }
            return try PayloadCodecRun.run(rounds: max(rounds, 3))
        }
        while let argument = arguments.next() {
            switch argument {
            case "--seconds": seconds = Double(arguments.next() ?? "") ?? seconds
            case "--rounds": rounds = Int(arguments.next() ?? "") ?? rounds
            case "--only": only = arguments.next()
            case "--verbose": verbose = true
            case "--idempotent": idempotent = true
            case "--in-flight": inFlightLevels = (arguments.next() ?? "").split(separator: ",").compactMap { Int($0) }
            case "--transport": transports = (arguments.next() ?? "").split(separator: ",").map(String.init)
            case "--event-loop":
                modes = try (arguments.next() ?? "").split(separator: ",").map { try BusEventLoopMode.parse(String($0)) }
            default:
                FileHandle.standardError.write(
                    Data(
                        "usage: bus-bench codecs [--rounds N] | bus-bench [--seconds S] [--rounds N] [--in-flight 1,64,512] [--transport tcp,ipc] [--event-loop per-socket,single] [--only raw|envelope|codec] [--idempotent] [--verbose]\n"
                            .utf8))
                exit(2)
            }
        }
        if only == "codec" { return try CodecRun.run(rounds: max(rounds, 5)) }
        var logger = Logger(label: "bus-bench")
        logger.logLevel = .error
        let size = EnvelopeRPCRun.envelopeSize
        print(
            "bus-bench: \(rounds) rounds of \(seconds) s each, envelope of \(size) bytes, median round trips/s"
                + (idempotent ? "; envelope calls idempotent (a key each, remembered by the server)" : ""))
        print("transport  in-flight  event loop   raw libzmq   envelope RPC   ratio   µs CPU/call   raw µs CPU/rt")
        for transport in transports {
            for inFlight in inFlightLevels {
                var raw: [Double] = []
                var rawCPU: [Double] = []
                var envelope: [BusEventLoopMode: [Double]] = [:]
                var cpu: [BusEventLoopMode: [Double]] = [:]
                var loops: [BusEventLoopMode: [String]] = [:]
                for _ in 0..<rounds {
                    let rawEndpoint = transport == "tcp" ? "tcp://127.0.0.1:*" : "ipc:///tmp/bus-bench-raw-\(getpid()).sock"
                    let envEndpoint = transport == "tcp" ? "tcp://127.0.0.1:*" : "ipc:///tmp/bus-bench-env-\(getpid()).sock"
                    if only != "envelope" {
                        let cpuStart = EnvelopeRPCRun.processCPUSeconds()
                        let (rate, roundTrips) = RawZMQBaseline.run(endpoint: rawEndpoint, messageSize: size, inFlight: inFlight, seconds: seconds)
                        raw.append(rate)
                        rawCPU.append((EnvelopeRPCRun.processCPUSeconds() - cpuStart) / Double(max(roundTrips, 1)) * 1e6)
                    }
                    // Every mode in every round, beside the same round's raw figure.
                    for mode in modes where only != "raw" {
                        BusEventLoopMode.use(mode)
                        let run = try await EnvelopeRPCRun.run(
                            endpoint: envEndpoint, inFlight: inFlight, seconds: seconds, idempotent: idempotent, logger: logger)
                        envelope[mode, default: []].append(run.rate)
                        cpu[mode, default: []].append(run.cpuMicros)
                        loops[mode, default: []].append(Self.describe(run))
                    }
                }
                let r = median(raw)
                for mode in only == "raw" ? [modes[0]] : modes {
                    let e = median(envelope[mode] ?? [])
                    print(
                        transport.padding(toLength: 11, withPad: " ", startingAt: 0)
                            + String(inFlight).padding(toLength: 11, withPad: " ", startingAt: 0)
                            + mode.rawValue.padding(toLength: 11, withPad: " ", startingAt: 0)
                            + String(format: "%10.0f   %12.0f   %5.2f   %11.1f   %13.1f", r, e, e / r, median(cpu[mode] ?? []), median(rawCPU)))
                    if verbose { for line in loops[mode] ?? [] { print("    " + line) } }
                }
            }
        }
    }

    /// Per call: the client's and the server's loop turns, sleeps and eventfd wake-ups; messages
    /// received per turn (the batch size).
    static func describe(_ run: EnvelopeRPCRun.Result) -> String {
        func side(_ name: String, _ s: LoopStatistics) -> String {
            let calls = Double(max(run.calls, 1))
            return String(
                format: "%@ turns/call %.2f sleeps/call %.2f signals/call %.2f received/turn %.1f", name,
                Double(s.turns) / calls, Double(s.sleeps) / calls, Double(s.wakeUpSignals) / calls,
                Double(s.received) / Double(max(s.turns, 1)))
        }
        return side("client", run.client) + " | " + side("server", run.server)
    }

    static func median(_ values: [Double]) -> Double {
        guard !values.isEmpty else { return .nan }
        let sorted = values.sorted()
        return sorted[sorted.count / 2]
    }
}
