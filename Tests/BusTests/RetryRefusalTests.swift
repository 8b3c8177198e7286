import Foundation
import TestSupport
import Testing

@testable import Bus

/// An idempotent call the server keeps refusing with `unavailable` is retried until its deadline;
/// then the caller gets the server's refusal (code and reason), not a bare `deadline_exceeded`.
@Suite struct RetryRefusalTests {
    enum AlwaysRefused: RPCMethod {
        typealias Request = Empty
        typealias Reply = Empty
        static let type = "test.always_refused"
        static let isIdempotent = true
        static let cachesReply = true
    }

    @Test func deadlineDuringRetriesReturnsTheServersReason() async throws {
        let logger = testLogger()
        let server = RPCServer(name: "test", endpoints: ["tcp://127.0.0.1:*"], logger: logger)
        let runs = Tally()
        let refuse: @Sendable (Empty, BusRequestContext) async throws -> Empty = { _, _ in
            runs.add()
            throw BusError(.unavailable, "the database is read-only; try again later")
        }
        server.register(AlwaysRefused.self, refuse)
        try await server.start()
        let client = try await RPCClient.connect(to: "test", endpoints: server.boundEndpoints, logger: logger)
        // Connected before the call, so its deadline is spent on refusals and retries: a fresh-clone
        // run at a high load spent most of a 2 s deadline connecting, and its one refusal came with
        // under 20 ms left, too late to be retried (``CallAttempts``).
        try await withTimeout(.seconds(60), "the client connecting") {
            while !client.isConnected { try await Task.sleep(for: .milliseconds(10)) }
        }
        // The client retries within its deadline and then gives up with the last refusal: a client
        // that retried past its deadline would still be retrying when the 60 s guard ends the test.
        let error = try await withTimeout(.seconds(60), "the refused call giving up at its 5 s deadline") {
            await #expect(throws: BusError.self) {
                _ = try await client.call(AlwaysRefused.self, Empty(), timeout: .seconds(5))
            }
        }
        #expect(error?.code == .unavailable)
        #expect(error?.message == "the database is read-only; try again later")
        #expect(runs.count > 1, "the client did not retry")
        await client.close()
        await server.shutdown()
    }
}
