import Bus
import Foundation
import TestSupport
import Testing

@testable import ServiceKit

/// The bus logs a refused CURVE handshake at debug only (it is a library), so `/metrics` is where an
/// operator sees a key that is not admitted: the server and the refused client both count it.
@Suite struct RefusedHandshakeMetricsTests {
    @Test func aKeyNotAdmittedIsCountedByTheServerAndByTheClient() async throws {
        let registry = MetricsBootstrap.bootstrap()
        let logger = testLogger()
        let (serverKeys, admitted, stranger) = (try CurveKeyPair.generate(), try CurveKeyPair.generate(), try CurveKeyPair.generate())
        let server = RPCServer(
            name: "refusing", endpoints: ["tcp://127.0.0.1:*"],
            security: .curve(serverKeys, admitted: ZAPPolicy(admitted: [admitted.publicKey: "gateway"])), logger: logger)
        try await server.start()
        let client = try await RPCClient.connect(
            to: "refusing", endpoints: server.boundEndpoints, security: .curve(stranger, serverPublicKey: serverKeys.publicKey),
            logger: logger)

        var counted: [String] = []
        let deadline = ContinuousClock.now + .seconds(10)
        while counted.count < 2, ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(50))
            counted = MetricsBootstrap.exposition(of: registry).split(separator: "\n").map(String.init).filter {
                $0.hasPrefix("bus_handshakes_refused_total{") && $0.contains(".refusing\"") && !$0.hasSuffix(" 0")
            }
        }
        await client.close()
        await server.shutdown()

        #expect(counted.contains { $0.contains(#"component="rpc-server.refusing""#) }, "\(counted)")
        #expect(counted.contains { $0.contains(#"component="rpc-client.refusing""#) }, "\(counted)")
    }
}
