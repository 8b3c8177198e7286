import Bus
import Foundation
import Postgres
import TestSupport
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A real service process built with `BusServiceMain`: start-up against PostgreSQL, a write with
/// its outbox event, graceful shutdown on SIGTERM with a request in flight, configuration errors.
@Suite(.serialized) struct BusServiceProcessTests {
    struct NoteRequest: Codable, Sendable {
        var text: String
        var delayMs: Int
    }
    struct NoteReply: Codable, Sendable, Equatable { var id: Int64 }
    enum Record: RPCMethod {
        typealias Request = NoteRequest
        typealias Reply = NoteReply
        static let type = "example.record"
        static let cachesReply = false
    }

    func environment(rpc: String, events: String) throws -> [String: String] {
        var environment = ProcessInfo.processInfo.environment
        environment["DATABASE_URL"] = try TestDatabase.url()
        environment["RPC_BIND"] = rpc
        environment["EVENTS_BIND"] = events
        environment["HEALTH_PORT"] = "0"
        environment["LOG_LEVEL"] = "info"
        return environment
    }

    @Test func servesWritesPublishesAndShutsDownGracefully() async throws {
        // The child process uses the shared cluster: hold the shared gate, so no restart test
        // restarts it meanwhile.
        try await TestDatabase.withSchema { _ in try await servesWritesPublishesAndShutsDownGracefullyBody() }
    }

    private func servesWritesPublishesAndShutsDownGracefullyBody() async throws {
        let (rpc, events) = (ipcEndpoint(), ipcEndpoint())
        let service = try await PeerProcess("ExampleService", environment: try environment(rpc: rpc, events: events))
        let logger = testLogger()
        let client = try await RPCClient.connect(to: "example", endpoints: [rpc], logger: logger)
        let subscriber = try await EventSubscriber.connect(endpoints: [events], topics: ["example."], logger: logger)

        let first: NoteReply
        do {
            first = try await client.call(Record.self, NoteRequest(text: "hello", delayMs: 0), timeout: .seconds(10))
        } catch {
            Issue.record("first call failed: \(error); service output:\n\(service.output)")
            throw error
        }
        #expect(first.id > 0)
        // Live delivery needs the subscription to have joined (a PUB drops events for a
        // subscriber not yet connected: the outbox catch-up covers that, not tested here).
        try await withTimeout(.seconds(10), "subscription") {
            while !subscriber.isConnected { try await Task.sleep(for: .milliseconds(20)) }
        }
        try await Task.sleep(for: .milliseconds(200))
        let second: NoteReply
        do { second = try await client.call(Record.self, NoteRequest(text: "world", delayMs: 0)) } catch {
            Issue.record("second call failed: \(error); service output:\n\(service.output)")
            throw error
        }
        let seen = try await withTimeout(.seconds(10), "the second write's event") {
            var seen: [Int64] = []
            for await event in subscriber {
                seen.append(try event.envelope.decodePayload(NoteReply.self).id)
                if seen.contains(second.id) { break }
            }
            return seen
        }
        #expect(seen.contains(second.id))

        // SIGTERM with a request in flight: it still gets its reply, then the process exits 0.
        let marker = "late-\(UUID().uuidString)"
        let inFlight = Task { try await client.call(Record.self, NoteRequest(text: marker, delayMs: 1000), timeout: .seconds(20)) }
        // Signal only once the request is being handled: its row is written before it waits.
        let database = try await PostgresConnection.connect(configuration: PostgresConfiguration(url: TestDatabase.url()), logger: testLogger())
        try await withTimeout(.seconds(10), "the late request to start") {
            while try await database.run({ db in
                try db.query("SELECT count(*) FROM example.notes WHERE text = $1", marker)[0].decode(Int.self, column: 0)
            }) == 0 {
                try await Task.sleep(for: .milliseconds(10))
            }
        }
        await database.close()
        service.signal(SIGTERM)
        let late: NoteReply
        do { late = try await inFlight.value } catch {
            Issue.record("in-flight call failed: \(error); service output:\n\(service.output)")
            throw error
        }
        #expect(late.id > second.id)
        #expect(await service.waitForExit(timeout: .seconds(15)) == 0, "output:\n\(service.output)")

        await subscriber.close()
        await client.close()
    }

    /// A log collector that reads `LOG_FORMAT=json` output rejects a line that is not JSON: the
    /// ready handshake is a JSON object then, and so is every other line from start to exit.
    @Test func jsonLogFormatWritesOnlyJSONLinesTheReadyLineIncluded() async throws {
        try await TestDatabase.withSchema { _ in
            var environment = try environment(rpc: ipcEndpoint(), events: ipcEndpoint())
            environment["LOG_FORMAT"] = "json"
            let service = try await PeerProcess("ExampleService", environment: environment)
            let port = try #require(service.healthPort, "ready fields: \(service.readyLine)")
            let (_, response) = try await URLSession.shared.data(from: URL(string: "http://127.0.0.1:\(port)/healthz")!)
            #expect((response as? HTTPURLResponse)?.statusCode == 200)
            service.signal(SIGTERM)
            #expect(await service.waitForExit(timeout: .seconds(15)) == 0, "output:\n\(service.output)")

            let lines = service.output.split(separator: "\n").filter { !$0.isEmpty }
            #expect(lines.count >= 2, "output:\n\(service.output)")
            for line in lines {
                let object = (try? JSONSerialization.jsonObject(with: Data(line.utf8))) as? [String: Any]
                #expect(object != nil, "not a JSON object: \(line)")
            }
            let ready = lines.compactMap { (try? JSONSerialization.jsonObject(with: Data($0.utf8))) as? [String: Any] }
                .first { $0["message"] as? String == "ready" && $0["health"] != nil }
            #expect(ready?["health"] as? String == String(port))
            #expect(ready?["service"] as? String == "example")
        }
    }

    @Test func helpEnvListsEveryVariable() async throws {
        let process = Process()
        process.executableURL = PeerProcess.productsDirectory.appendingPathComponent("ExampleService")
        process.arguments = ["--help-env"]
        let pipe = Pipe()
        process.standardOutput = pipe
        try process.run()
        let output = String(decoding: try pipe.fileHandleForReading.readToEnd() ?? Data(), as: UTF8.self)
        await process.exited()
        #expect(process.terminationStatus == 0)
        for variable in [
            "DATABASE_URL", "RPC_BIND", "EVENTS_BIND", "BUS_SECRET_KEY", "BUS_ADMITTED_KEYS", "AUDIT_RPC_ENDPOINTS", "LOG_FORMAT", "HEALTH_PORT",
        ] {
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
        await process.exited()
        #expect(process.terminationStatus == 1)
        #expect(output.contains("DATABASE_URL is not set"), "output: \(output)")
    }
}
