import Foundation
import Synchronization
import TestSupport
import Testing

@testable import Bus

/// The process event loop (`BUS_EVENT_LOOP=single`): sockets polled by one `BusEventLoop` thread
/// that also runs the handlers and the callers that prefer it. Each test makes loops of its own
/// (as two processes would have), so it holds whatever the environment's mode.
@Suite struct EventLoopTests {
    let logger = testLogger()

    /// Where a handler ran: before and after its suspension, on the server's loop or not.
    struct Placement: Codable, Sendable {
        var beforeAwait: Bool
        var afterAwait: Bool
    }

    enum WhereDidItRun: RPCMethod {
        typealias Request = EchoRequest
        typealias Reply = Placement
        static let type = "test.where_did_it_run"
        static let cachesReply = false
    }

    private func options(_ loop: BusEventLoop) -> (RPCServerOptions, RPCClientOptions) {
        var server = RPCServerOptions()
        server.eventLoop = loop
        var client = RPCClientOptions()
        client.eventLoop = loop
        return (server, client)
    }

    @Test(arguments: ["tcp://127.0.0.1:*", "ipc"])
    func handlersAndCallersStayOnTheirLoops(_ transport: String) async throws {
        let (serverLoop, clientLoop) = (try BusEventLoop(name: "test-server"), try BusEventLoop(name: "test-client"))
        let server = RPCServer(
            name: "test", endpoints: [transport == "ipc" ? ipcEndpoint() : transport], options: options(serverLoop).0,
            logger: logger)
        server.register(WhereDidItRun.self) { request, _ in
            let before = serverLoop.isCurrent
            // Suspends: the handler must come back to the loop, not to the cooperative pool.
            try await Task.sleep(for: .milliseconds(request.delayMs))
            return Placement(beforeAwait: before, afterAwait: serverLoop.isCurrent)
        }
        try await server.start()
        let client = try await RPCClient.connect(
            to: "test", endpoints: server.boundEndpoints, options: options(clientLoop).1, logger: logger)
        let results = try await withThrowingTaskGroup(of: (Int, Placement, Bool).self) { group in
            for number in 0..<500 {
                group.addTask(executorPreference: clientLoop) {
                    let placement = try await client.call(
                        WhereDidItRun.self, EchoRequest(number: number, delayMs: number % 3), timeout: .seconds(30))
                    return (number, placement, clientLoop.isCurrent)
                }
            }
            var results: [(Int, Placement, Bool)] = []
            for try await result in group { results.append(result) }
            return results
        }
        #expect(results.count == 500)
        #expect(results.allSatisfy { $0.1.beforeAwait && $0.1.afterAwait }, "every handler ran on the server's loop")
        #expect(results.allSatisfy { $0.2 }, "every caller resumed on the client's loop")
        #expect(!serverLoop.isCurrent && !clientLoop.isCurrent)
        await client.close()
        await server.shutdown()
    }

    /// Sockets come and go on a loop that keeps serving others: a stopping socket's close (which
    /// waits for its last sends) must not hold up the loop.
    @Test func socketsOpenAndCloseWhileOthersServe() async throws {
        let loop = try BusEventLoop(name: "test-shared")
        let (serverOptions, clientOptions) = options(loop)
        let server = RPCServer(name: "steady", endpoints: ["tcp://127.0.0.1:*"], options: serverOptions, logger: logger)
        registerTestHandlers(on: server)
        try await server.start()
        let client = try await RPCClient.connect(
            to: "steady", endpoints: server.boundEndpoints, options: clientOptions, logger: logger)
        let calls = Task {
            var answered = 0
            for number in 0..<300 {
                let reply = try await client.call(TestEcho.self, EchoRequest(number: number), timeout: .seconds(10))
                if reply.number == number { answered += 1 }
            }
            return answered
        }
        for round in 0..<5 {
            let passing = RPCServer(name: "passing", endpoints: ["tcp://127.0.0.1:*"], options: serverOptions, logger: logger)
            registerTestHandlers(on: passing)
            try await passing.start()
            let passingClient = try await RPCClient.connect(
                to: "passing", endpoints: passing.boundEndpoints, options: clientOptions, logger: logger)
            #expect(try await passingClient.call(TestEcho.self, EchoRequest(number: round), timeout: .seconds(10)).number == round)
            // Each close waits for its last sends (the close grace, ~200 ms) on a thread of its own,
            // so the loop answers the steady client meanwhile: a call sent while the close is under
            // way is answered, and the close ends. Both are waited for up to 60 s, a bound only
            // against a close that never ends (a loaded machine makes the grace last seconds).
            let echoed = try await withTimeout(.seconds(60), "round \(round)'s close, and a steady call during it") {
                let closing = Task {
                    await passingClient.close()
                    await passing.shutdown()
                }
                let reply = try await client.call(TestEcho.self, EchoRequest(number: 1000 + round), timeout: .seconds(30))
                await closing.value
                return reply.number
            }
            #expect(echoed == 1000 + round)
        }
        #expect(try await calls.value == 300)
        await client.close()
        await server.shutdown()
    }

    @Test func settingNamesTheModeOrIsRefused() throws {
        #expect(try BusEventLoopMode.parse(nil) == .perSocket)
        #expect(try BusEventLoopMode.parse("") == .perSocket)
        #expect(try BusEventLoopMode.parse("single") == .single)
        #expect(try BusEventLoopMode.parse("per-socket") == .perSocket)
        #expect(try BusEventLoopMode.parse("Single") == .single, "as BusSettings reads it")
        let error = #expect(throws: BusError.self) { try BusEventLoopMode.parse("one") }
        #expect(error?.code == .invalidArgument)
        #expect(error?.message.contains("single, per-socket") == true)
    }
}
