import Bus
import Foundation
import Logging
import Synchronization

struct BenchRequest: Codable, Sendable {
    var user: String
    var document: String
    var version: String
    var note: String
}

enum BenchEcho: RPCMethod {
    typealias Request = BenchRequest
    typealias Reply = BenchRequest
    static let type = "bench.echo"
    static let cachesReply = false
}

/// The same, marked idempotent: each call carries a fresh idempotency key, which the server
/// remembers with its reply (the acceptance path's `audit.record` is such a method).
enum BenchEchoIdempotent: RPCMethod {
    typealias Request = BenchRequest
    typealias Reply = BenchRequest
    static let type = "bench.echo_idempotent"
    static let isIdempotent = true
    static let cachesReply = true
}

/// Envelope RPC round trips: `RPCClient` to an `RPCServer` whose handler echoes the payload.
enum EnvelopeRPCRun {
    static let request = BenchRequest(
        user: "0d8f7c36-8a0c-4f55-9a1e-7b0c2e7a9d11", document: "terms_of_service", version: "2026-11-01",
        note: String(repeating: "n", count: 64))

    /// The encoded size of one request envelope, so the raw baseline sends the same bytes.
    static var envelopeSize: Int {
        let envelope = Envelope(
            kind: .request, type: BenchEcho.type, deadline: Date(), principal: .user(request.user),
            payload: try! BusJSON.encode(request))
        return EnvelopeCodec.encode(envelope).count
    }

    /// Round trips per second, and the process's CPU time (user + system, client and server
    /// together) per round trip in microseconds: on a noisy machine the second is the steadier
    /// measure of per-call cost.
    struct Result {
        var rate: Double
        var cpuMicros: Double
        var calls: Int
        /// What the client's and the server's socket threads did during the run.
        var client: LoopStatistics
        var server: LoopStatistics
    }

    /// With `BUS_EVENT_LOOP=single`, the server and the client are two processes' loops played in
    /// one: each side gets an event loop of its own (made once, kept for the run), as two services
    /// would have, rather than one thread doing both sides' work.
    static let loops = Swift.Result<(server: BusEventLoop, client: BusEventLoop), any Error> {
        (try BusEventLoop(name: "bench-server"), try BusEventLoop(name: "bench-client"))
    }

    static func run(endpoint: String, inFlight: Int, seconds: Double, idempotent: Bool = false, logger: Logger) async throws -> Result {
        let loops = BusEventLoopMode.current == .single ? try Self.loops.get() : nil
        var serverOptions = RPCServerOptions()
        serverOptions.eventLoop = loops?.server
        var clientOptions = RPCClientOptions()
        clientOptions.eventLoop = loops?.client
        let server = RPCServer(name: "bench", endpoints: [endpoint], options: serverOptions, logger: logger)
        server.register(BenchEcho.self) { request, _ in request }
        server.register(BenchEchoIdempotent.self) { request, _ in request }
        @Sendable func call() async throws {
            if idempotent {
                _ = try await client.call(BenchEchoIdempotent.self, request, principal: .user(request.user))
            } else {
                _ = try await client.call(BenchEcho.self, request, principal: .user(request.user))
            }
        }
        try await server.start()
        let client = try await RPCClient.connect(
            to: "bench", endpoints: server.boundEndpoints, options: clientOptions, logger: logger)
        try await call()

        let completed = CompletedCount()
        let (clientStart, serverStart) = (client.loopStatistics, server.loopStatistics)
        let cpuStart = processCPUSeconds()
        let start = ContinuousClock.now
        let end = start + .milliseconds(Int(seconds * 1000))
        // Callers prefer the client's event loop when there is one, as a service's handlers do:
        // a call then stays on the loop's thread from the caller to the socket and back.
        let executor = loops?.client
        try await withThrowingTaskGroup(of: Void.self) { group in
            for _ in 0..<inFlight {
                group.addTask(executorPreference: executor) {
                    while ContinuousClock.now < end {
                        try await call()
                        completed.increment()
                    }
                }
            }
            try await group.waitForAll()
        }
        let elapsed = ContinuousClock.now - start
        let cpu = processCPUSeconds() - cpuStart
        let (clientStats, serverStats) = (client.loopStatistics - clientStart, server.loopStatistics - serverStart)
        await client.close()
        await server.shutdown()
        let calls = Double(completed.value)
        return Result(
            rate: calls / elapsed.inSeconds, cpuMicros: cpu / calls * 1e6, calls: completed.value,
            client: clientStats, server: serverStats)
    }

    /// User plus system CPU time of the whole process so far.
    static func processCPUSeconds() -> Double {
        var usage = rusage()
        getrusage(RUSAGE_SELF.rawValue, &usage)
        func seconds(_ time: timeval) -> Double { Double(time.tv_sec) + Double(time.tv_usec) / 1e6 }
        return seconds(usage.ru_utime) + seconds(usage.ru_stime)
    }
}

/// Calls completed across the benchmark's tasks.
final class CompletedCount: Sendable {
    private let count = Atomic<Int>(0)
    func increment() { count.add(1, ordering: .relaxed) }
    var value: Int { count.load(ordering: .relaxed) }
}
