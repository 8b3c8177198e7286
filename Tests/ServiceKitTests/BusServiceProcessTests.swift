import Bus
import Foundation
import Testing
import TestSupport

/// A real service process built with `BusServiceMain`: start-up against PostgreSQL, a write with
/// its outbox event, graceful shutdown on SIGTERM with a request in flight, configuration errors.
@Suite(.serialized) struct BusServiceProcessTests {
    struct NoteRequest: Codable, Sendable { var text: String; var delayMs: Int }
    struct NoteReply: Codable, Sendable, Equatable { var id: Int64 }
    enum Record: RPCMethod {
        typealias Request = NoteRequest
        typealias Reply = NoteReply
        static let type = "example.record"
    }

    func environment(rpc: String, events: String) throws -> [String: String] {
        var environment = ProcessInfo.processInfo.environment
        environment["DATABASE_URL"] = try TestDatabase.url()
        environment["RPC_BIND"] = rpc
        environment["EVENTS_BIND"] = events
        environment["HEALTH_PORT"] = "0"
        environment["LOG_LEVEL"] = "error"
        return environment
    }

    @Test func servesWritesPublishesAndShutsDownGracefully() async throws {
        let (rpc, events) = (ipcEndpoint(), ipcEndpoint())
        let service = try await PeerProcess("ExampleService", environment: try environment(rpc: rpc, events: events))
        let logger = testLogger()
        let client = try await RPCClient.connect(to: "example", endpoints: [rpc], logger: logger)
        let subscriber = try await EventSubscriber.connect(endpoints: [events], topics: ["example."], logger: logger)

        let first = try await client.call(Record.self, NoteRequest(text: "hello", delayMs: 0), timeout: .seconds(10))
        #expect(first.id > 0)
        var iterator = subscriber.makeAsyncIterator()
        // The subscription may have joined after the first event went out; catch-up exists for
        // that. Here a second write after the join is enough to see a live event.
        try await Task.sleep(for: .milliseconds(300))
        let second = try await client.call(Record.self, NoteRequest(text: "world", delayMs: 0))
        var seen: [Int64] = []
        while let event = await iterator.next() {
            seen.append(try event.envelope.decodePayload(NoteReply.self).id)
            if seen.contains(second.id) { break }
        }
        #expect(seen.contains(second.id))

        // SIGTERM with a request in flight: it still gets its reply, then the process exits 0.
        let inFlight = Task { try await client.call(Record.self, NoteRequest(text: "late", delayMs: 800), timeout: .seconds(10)) }
        try await Task.sleep(for: .milliseconds(200))
        service.signal(SIGTERM)
        let late = try await inFlight.value
        #expect(late.id > second.id)
        #expect(await service.waitForExit(timeout: .seconds(15)) == 0, "output:\n\(service.output)")

        await subscriber.close()
        await client.close()
    }

    @Test func helpEnvListsEveryVariable() async throws {
        let process = Process()
        process.executableURL = PeerProcess.productsDirectory.appendingPathComponent("ExampleService")
        process.arguments = ["--help-env"]
        let pipe = Pipe()
        process.standardOutput = pipe
        try process.run()
        let output = String(decoding: try pipe.fileHandleForReading.readToEnd() ?? Data(), as: UTF8.self)
        process.waitUntilExit()
        #expect(process.terminationStatus == 0)
        for variable in ["DATABASE_URL", "RPC_BIND", "EVENTS_BIND", "BUS_SECRET_KEY", "BUS_ADMITTED_KEYS", "AUDIT_RPC_ENDPOINTS", "LOG_FORMAT", "HEALTH_PORT"] {
            #expect(output.contains(variable), "missing \(variable)")
        }
    }

    @Test func missingDatabaseURLExitsWithAClearError() async throws {
        var environment = try environment(rpc: ipcEndpoint(), events: ipcEndpoint())
        environment["DATABASE_URL"] = nil
        let process = Process()
        process.executableURL = PeerProcess.productsDirectory.appendingPathComponent("ExampleService")
        process.environment = environment
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        try process.run()
        let output = String(decoding: try pipe.fileHandleForReading.readToEnd() ?? Data(), as: UTF8.self)
        process.waitUntilExit()
        #expect(process.terminationStatus == 1)
        #expect(output.contains("DATABASE_URL is not set"), "output: \(output)")
    }
}
