import Foundation
import Synchronization
import TestSupport
import Testing

@testable import Bus

@Suite struct RPCTests {
    let logger = testLogger()

    private func startServer(
        _ endpoint: String = "tcp://127.0.0.1:*", options: RPCServerOptions = RPCServerOptions(),
        executions: @escaping @Sendable () -> Void = {}
    ) async throws -> RPCServer {
        let server = RPCServer(name: "test", endpoints: [endpoint], options: options, logger: logger)
        registerTestHandlers(on: server, executions: executions)
        try await server.start()
        return server
    }

    @Test(arguments: ["tcp://127.0.0.1:*", "ipc"])
    func thousandConcurrentCallsAllMatchedAcrossReordering(_ transport: String) async throws {
        let server = try await startServer(transport == "ipc" ? ipcEndpoint() : transport)
        let client = try await RPCClient.connect(to: "test", endpoints: server.boundEndpoints, logger: logger)
        let replies = try await withThrowingTaskGroup(of: (Int, EchoReply).self) { group in
            for number in 0..<1000 {
                group.addTask {
                    // Later requests answer sooner: replies overtake each other on the way back.
                    let request = EchoRequest(number: number, text: "n\(number)", delayMs: (999 - number) % 50)
                    return (number, try await client.call(TestEcho.self, request, timeout: .seconds(30)))
                }
            }
            var replies: [Int: EchoReply] = [:]
            for try await (number, reply) in group { replies[number] = reply }
            return replies
        }
        #expect(replies.count == 1000)
        for (number, reply) in replies {
            #expect(reply.number == number)
            #expect(reply.text == "n\(number)")
        }
        await client.close()
        await server.shutdown()
    }

    @Test func slowHandlerDoesNotBlockOthers() async throws {
        let server = try await startServer()
        let client = try await RPCClient.connect(to: "test", endpoints: server.boundEndpoints, logger: logger)
        // The slow call's handler sleeps 5 s; the quick call, sent while it runs, is answered first.
        let slowAnswered = Tally()
        let slow = Task {
            let reply = try await client.call(TestEcho.self, EchoRequest(number: 1, delayMs: 5000), timeout: .seconds(30))
            slowAnswered.add()
            return reply
        }
        try await Task.sleep(for: .milliseconds(100))
        let quick = try await client.call(TestEcho.self, EchoRequest(number: 2), timeout: .seconds(30))
        #expect(quick.number == 2)
        #expect(slowAnswered.count == 0, "the quick call was answered only after the slow one")
        #expect(try await slow.value.number == 1)
        await client.close()
        await server.shutdown()
    }

    @Test func unknownTypeNewerVersionAndExpiredDeadlineGetErrorReplies() async throws {
        let server = try await startServer()
        let client = try await RPCClient.connect(to: "test", endpoints: server.boundEndpoints, logger: logger)

        let unknown = try await client.send(Envelope(kind: .request, type: "test.nope"))
        #expect(unknown.envelope.error?.code == .invalidArgument)
        #expect(unknown.envelope.error?.message.contains("test.nope") == true)

        let newer = try await client.send(Envelope(v: 9, kind: .request, type: TestEcho.type, payload: try BusJSON.encode(EchoRequest(number: 1))))
        #expect(newer.envelope.error?.code == .invalidArgument)
        #expect(newer.envelope.error?.details?["supportedVersion"] == "1")

        let badPayload = try await client.send(Envelope(kind: .request, type: TestEcho.type, payload: Data(#"{"number":"x"}"#.utf8)))
        #expect(badPayload.envelope.error?.code == .invalidArgument)

        await #expect(throws: BusError.self) {
            _ = try await client.call(TestEcho.self, EchoRequest(number: 3), timeout: .milliseconds(-100))
        }
        await client.close()
        await server.shutdown()
    }

    @Test func expiredRequestIsNotRun() async throws {
        let runs = Atomic<Int>(0)
        let server = try await startServer(executions: { runs.add(1, ordering: .relaxed) })
        let raw = try await RawPeer.connect(server.boundEndpoints[0], logger: logger)
        var envelope = Envelope(kind: .request, type: TestCountedEcho.type, idempotencyKey: "k", payload: try BusJSON.encode(EchoRequest(number: 1)))
        envelope.deadline = Date().addingTimeInterval(-1)
        let reply = try await raw.roundTrip(Frames.dealer(EnvelopeCodec.encode(envelope), []))
        let body = try #require(Frames.splitDealer(reply))
        #expect(try EnvelopeCodec.decode(body.envelope).error?.code == .deadlineExceeded)
        #expect(runs.load(ordering: .relaxed) == 0)
        await raw.close()
        await server.shutdown()
    }

    @Test func idempotentCallRetriedOnLostReplyRunsOnce() async throws {
        let runs = Atomic<Int>(0)
        let server = try await startServer(executions: { runs.add(1, ordering: .relaxed) })
        var options = RPCClientOptions()
        options.attemptTimeout = .milliseconds(200)
        let client = try await RPCClient.connect(to: "test", endpoints: server.boundEndpoints, options: options, logger: logger)
        // The handler takes 900 ms: the client gives up on attempts 1–4 and sends the same key again.
        let reply = try await client.call(TestCountedEcho.self, EchoRequest(number: 5, delayMs: 900), timeout: .seconds(5))
        #expect(reply.number == 5)
        #expect(runs.load(ordering: .relaxed) == 1)
        // A later call with the same key is answered from the record, not run again.
        let again = try await client.call(TestCountedEcho.self, EchoRequest(number: 5, delayMs: 900), idempotencyKey: "fixed", timeout: .seconds(5))
        let replay = try await client.call(TestCountedEcho.self, EchoRequest(number: 5, delayMs: 900), idempotencyKey: "fixed", timeout: .seconds(5))
        #expect(again == replay)
        #expect(runs.load(ordering: .relaxed) == 2)
        await client.close()
        await server.shutdown()
    }

    /// A read slower than the client's attempt timeout is sent again under the same id; the server
    /// still running it answers the retries with that run, instead of running one copy per attempt
    /// (which, under load, kept a slow read from ever finishing). A retry sent just before the
    /// reply and read after the run ended finds the id free and runs once more: at most one extra
    /// run per call, where one per attempt was fifteen.
    @Test func aSlowReadRetriedByItsClientIsNotRunPerAttempt() async throws {
        let runs = Atomic<Int>(0)
        let server = try await startServer(executions: { runs.add(1, ordering: .relaxed) })
        var options = RPCClientOptions()
        options.attemptTimeout = .milliseconds(100)
        let client = try await RPCClient.connect(to: "test", endpoints: server.boundEndpoints, options: options, logger: logger)
        // 1.5 s of work: the client sends it 15 times over.
        async let first = client.call(TestCountedRead.self, EchoRequest(number: 1, delayMs: 1500), timeout: .seconds(20))
        async let second = client.call(TestCountedRead.self, EchoRequest(number: 2, delayMs: 1500), timeout: .seconds(20))
        #expect(try await (first.number, second.number) == (1, 2))
        // Any run a late retry started ends too.
        let quiet = ContinuousClock.now + .seconds(10)
        while server.inFlight > 0, ContinuousClock.now < quiet { try await Task.sleep(for: .milliseconds(50)) }
        #expect(server.inFlight == 0)
        let afterTwo = runs.load(ordering: .relaxed)
        #expect((2...4).contains(afterTwo), "one run per call (and at most one more for a retry crossing its reply), not one per attempt")
        // The id is free once the run ended: a new call runs, once.
        _ = try await client.call(TestCountedRead.self, EchoRequest(number: 3), timeout: .seconds(5))
        #expect(runs.load(ordering: .relaxed) == afterTwo + 1)
        await client.close()
        await server.shutdown()
    }

    /// The same request under the same id from a second connection joins the run and gets its
    /// reply; another request under a running id is refused and runs nothing.
    @Test func aRunningIdIsJoinedOnlyByTheSameRequest() async throws {
        let runs = Atomic<Int>(0)
        let server = try await startServer(executions: { runs.add(1, ordering: .relaxed) })
        let (a, b, c) = (
            try await RawPeer.connect(server.boundEndpoints[0], logger: logger),
            try await RawPeer.connect(server.boundEndpoints[0], logger: logger),
            try await RawPeer.connect(server.boundEndpoints[0], logger: logger)
        )
        func request(_ number: Int, _ type: String = TestCountedRead.type) throws -> [Data] {
            var envelope = Envelope(kind: .request, type: type, payload: try BusJSON.encode(EchoRequest(number: number, delayMs: 3000)))
            envelope.id = UUID(uuidString: "0190a5f6-0000-7000-8000-000000000001")!
            return Frames.dealer(EnvelopeCodec.encode(envelope), [])
        }
        func reply(to peer: RawPeer) async throws -> Envelope {
            try EnvelopeCodec.decode(try #require(Frames.splitDealer(try await peer.next(timeout: .seconds(20)))).envelope)
        }
        a.send(try request(7))
        try await Task.sleep(for: .milliseconds(200))  // a's run has begun
        b.send(try request(7))
        c.send(try request(8))
        let refused = try await reply(to: c)
        #expect(refused.error?.code == .invalidArgument)
        for peer in [a, b] {
            let answer = try await reply(to: peer)
            #expect(answer.error == nil)
            #expect(try answer.decodePayload(EchoReply.self).number == 7)
        }
        #expect(runs.load(ordering: .relaxed) == 1)
        // Ended: the id runs again.
        c.send(try request(8))
        let later = try await reply(to: c)
        #expect(try later.decodePayload(EchoReply.self).number == 8)
        #expect(runs.load(ordering: .relaxed) == 2)
        for peer in [a, b, c] { await peer.close() }
        await server.shutdown()
    }

    /// Over real sockets: a method that does not cache (a read) runs for every call even with one
    /// key, so fresh keys cost the server nothing; one that does refuses the key for another body.
    @Test func readsAreNotRememberedAndAReusedKeyWithAnotherBodyIsRefused() async throws {
        let server = try await startServer()
        let client = try await RPCClient.connect(to: "test", endpoints: server.boundEndpoints, logger: logger)
        for number in 0..<3 {
            let reply = try await client.call(TestEcho.self, EchoRequest(number: number), idempotencyKey: "same", timeout: .seconds(5))
            #expect(reply.number == number, "a read with a used key runs again")
        }
        _ = try await client.call(TestCountedEcho.self, EchoRequest(number: 1), idempotencyKey: "k1", timeout: .seconds(5))
        await #expect(throws: BusError.self) {
            do {
                _ = try await client.call(TestCountedEcho.self, EchoRequest(number: 2), idempotencyKey: "k1", timeout: .seconds(5))
            } catch let error as BusError {
                #expect(error.code == .idempotencyKeyReused && error.code.httpStatus == 422)
                throw error
            }
        }
        let tooLong = String(repeating: "k", count: IdempotencyKeyRule.busKeyMaximumBytes + 1)
        await #expect(throws: BusError.self) {
            do { _ = try await client.call(TestEcho.self, EchoRequest(number: 1), idempotencyKey: tooLong, timeout: .seconds(5)) } catch let error
                as BusError
            {
                #expect(error.code == .invalidArgument)
                throw error
            }
        }
        await client.close()
        await server.shutdown()
    }

    @Test func attachmentsTravelAsFrames() async throws {
        let server = try await startServer()
        let client = try await RPCClient.connect(to: "test", endpoints: server.boundEndpoints, logger: logger)
        let chunk = Data((0..<1_000_000).map { UInt8(truncatingIfNeeded: $0) })
        let (_, attachments) = try await client.callWithAttachments(TestAttachments.self, Empty(), attachments: [Data([1]), chunk])
        #expect(attachments == [chunk, Data([1])])
        await client.close()
        await server.shutdown()
    }

    @Test func requestsSpreadOverSeveralServers() async throws {
        let firstRuns = Atomic<Int>(0)
        let secondRuns = Atomic<Int>(0)
        let first = try await startServer(executions: { firstRuns.add(1, ordering: .relaxed) })
        let second = try await startServer(executions: { secondRuns.add(1, ordering: .relaxed) })
        let client = try await RPCClient.connect(to: "test", endpoints: first.boundEndpoints + second.boundEndpoints, logger: logger)
        // Round robin only spreads over connections that are up.
        try await Task.sleep(for: .milliseconds(300))
        for number in 0..<200 {
            _ = try await client.call(TestCountedEcho.self, EchoRequest(number: number))
        }
        let (a, b) = (firstRuns.load(ordering: .relaxed), secondRuns.load(ordering: .relaxed))
        #expect(a + b == 200)
        #expect(a >= 50 && b >= 50, "round robin sent \(a) and \(b)")
        await client.close()
        await first.shutdown()
        await second.shutdown()
    }

    @Test func serverKilledMidCallFailsAtTheDeadline() async throws {
        let peer = try await PeerProcess("BusTestPeer", arguments: ["tcp://127.0.0.1:*"])
        let client = try await RPCClient.connect(to: "peer", endpoints: [peer.endpoint], logger: logger)
        #expect(try await client.call(TestEcho.self, EchoRequest(number: 1)).number == 1)

        let started = ContinuousClock.now
        let call = Task { try await client.call(TestEcho.self, EchoRequest(number: 2, delayMs: 5000), timeout: .milliseconds(1500)) }
        try await Task.sleep(for: .milliseconds(300))
        peer.kill()
        do {
            _ = try await call.value
            Issue.record("the call should fail")
        } catch let error as BusError {
            // The server is gone, not slow: unavailable, at the deadline.
            #expect(error.code == .unavailable)
            #expect(error.message.contains("peer"))
        }
        // At the deadline (1.5 s), not before it: the failure came from the deadline, not from the
        // kill alone. (No upper bound: the call could only end otherwise at the server's 5 s reply,
        // and the server is dead; a hang is the test's own time limit.)
        #expect(ContinuousClock.now - started >= .milliseconds(1400))
        await client.close()
    }

    @Test func gracefulShutdownLetsRunningHandlersReply() async throws {
        let server = try await startServer()
        let client = try await RPCClient.connect(to: "test", endpoints: server.boundEndpoints, logger: logger)
        let running = Task { try await client.call(TestEcho.self, EchoRequest(number: 7, delayMs: 500)) }
        // Shut down only once the request is running (under load it may take a moment to arrive).
        try await withTimeout(.seconds(10), "the request to arrive") {
            while server.inFlight == 0 { try await Task.sleep(for: .milliseconds(5)) }
        }
        await server.shutdown()
        #expect(try await running.value.number == 7)
        await client.close()
    }
}
