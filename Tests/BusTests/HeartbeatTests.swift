import Foundation
import TestSupport
import Testing

@testable import Bus

/// ZMTP heartbeats notice a peer that stopped answering (a frozen process keeps its TCP
/// connection open, so only heartbeats can tell), and the client reconnects when it comes back.
@Suite struct HeartbeatTests {
    @Test func frozenServerIsNoticedAndServesAgainAfterResume() async throws {
        let peer = try await PeerProcess("BusTestPeer", arguments: ["tcp://127.0.0.1:*"])
        var options = RPCClientOptions()
        options.heartbeatIntervalMs = 200
        options.heartbeatTimeoutMs = 800
        let client = try await RPCClient.connect(to: "peer", endpoints: [peer.endpoint], options: options, logger: testLogger())
        #expect(try await client.call(TestEcho.self, EchoRequest(number: 1)).number == 1)
        #expect(client.isConnected)

        peer.signal(SIGSTOP)
        try await withTimeout(.seconds(10), "the heartbeat to declare the peer dead") {
            while client.isConnected { try await Task.sleep(for: .milliseconds(50)) }
        }
        await #expect(throws: BusError.self) {
            _ = try await client.call(TestEcho.self, EchoRequest(number: 2), timeout: .milliseconds(500))
        }

        peer.signal(SIGCONT)
        let reply = try await client.call(TestEcho.self, EchoRequest(number: 3), timeout: .seconds(10))
        #expect(reply.number == 3)
        #expect(client.isConnected)
        peer.kill()
        await client.close()
    }
}
