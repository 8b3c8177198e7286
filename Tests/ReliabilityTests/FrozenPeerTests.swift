import Bus
import Contracts
import Foundation
import TestSupport
import Testing

extension ReliabilityTests {
    /// A service that stops answering (SIGSTOP keeps its sockets open, so only deadlines and
    /// heartbeats can tell): callers fail at their deadline with `deadline_exceeded`, heartbeats mark
    /// the connection dead, and after SIGCONT the same client is served again.
    @Suite("Reliability: a frozen peer")
    struct FrozenPeerTests {
        @Test(arguments: ["Legal", "Audit", "Accounts", "Documents"])
        func frozenServiceFailsCallsAtTheirDeadlineAndRecovers(service: String) async throws {
            try await Stack.run { stack in
                var options = RPCClientOptions()
                options.heartbeatIntervalMs = 200
                options.heartbeatTimeoutMs = 800
                let client = try await RPCClient.connect(
                    to: service.lowercased(), endpoints: [stack.rpc[service]!], options: options, logger: testLogger())
                try await probe(service, client, timeout: .seconds(10))
                // Connected before the freeze. On a loaded machine a heartbeat may have come late
                // and marked the connection dead for a moment (CI saw it at a load of 10 on 2 cores):
                // the next heartbeat revives it.
                try await withTimeout(.seconds(10), "\(service)'s connection to be live") {
                    while !client.isConnected { try await Task.sleep(for: .milliseconds(20)) }
                }

                let process = try #require(stack.process(service))
                process.signal(SIGSTOP)
                try await waitUntilStopped(process.process.processIdentifier)
                let timeout: Duration = .milliseconds(700)
                let began = ContinuousClock.now
                let error = await #expect(throws: BusError.self) { try await probe(service, client, timeout: timeout) }
                let took = ContinuousClock.now - began
                #expect(error?.code == .deadlineExceeded)
                // Not before its deadline; and the peer stays frozen until after this, so only the
                // deadline can have ended the call (idle, it fails within 2 ms of it).
                #expect(took >= timeout, "failed after \(took)")

                let frozenAt = ContinuousClock.now
                try await withTimeout(.seconds(10), "the heartbeat to mark \(service) dead") {
                    while client.isConnected { try await Task.sleep(for: .milliseconds(20)) }
                }
                let markedDead = ContinuousClock.now - frozenAt

                process.signal(SIGCONT)
                let resumed = ContinuousClock.now
                try await probe(service, client, timeout: .seconds(10))
                let servedAgain = ContinuousClock.now - resumed
                // The reply came over the new connection; the monitor's handshake event may trail it.
                try await withTimeout(.seconds(5), "the client to see \(service)'s connection up again") {
                    while !client.isConnected { try await Task.sleep(for: .milliseconds(20)) }
                }
                await client.close()
                print(
                    "RELIABILITY sigstop-\(service) deadline=\(timeout) failed-after=\(took) code=\(error?.code.rawValue ?? "none") marked-dead-after=\(markedDead) served-after-sigcont=\(servedAgain)"
                )
            }
        }

        /// One cheap read the service answers.
        func probe(_ service: String, _ client: RPCClient, timeout: Duration) async throws {
            switch service {
            case "Legal": _ = try await client.call(LegalCurrent.self, .init(type: .termsOfService), timeout: timeout)
            case "Audit": _ = try await client.call(AuditPublicKey.self, Empty(), timeout: timeout)
            case "Accounts":
                _ = try await client.call(AccountsGetOrCreate.self, .init(appleId: "apple.probe"), principal: Stack.gateway, timeout: timeout)
            default: _ = try await client.call(DocumentsUsage.self, .init(userId: UUID()), principal: .service("accounts"), timeout: timeout)
            }
        }
    }
}
