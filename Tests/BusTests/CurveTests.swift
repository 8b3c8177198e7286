import Foundation
import TestSupport
import Testing

@testable import Bus

/// CurveZMQ with a ZAP allow-list: admitted keys work and name the peer; unknown keys and
/// plaintext clients are refused; only peers allowed to assert a principal have it honoured.
@Suite struct CurveTests {
    let logger = testLogger()

    private func curveServer(admitting clients: [String: String], asserters: Set<String>? = nil) async throws -> (RPCServer, CurveKeyPair) {
        let keys = try CurveKeyPair.generate()
        var options = RPCServerOptions()
        options.principalAsserters = asserters
        let server = RPCServer(
            name: "secure", endpoints: ["tcp://127.0.0.1:*"], security: .curve(keys, admitted: ZAPPolicy(admitted: clients)),
            options: options, logger: logger)
        registerTestHandlers(on: server)
        try await server.start()
        return (server, keys)
    }

    @Test func admittedKeyWorksAndPrincipalIsHonouredOnlyFromAsserters() async throws {
        let gateway = try CurveKeyPair.generate()
        let worker = try CurveKeyPair.generate()
        let (server, serverKeys) = try await curveServer(
            admitting: [gateway.publicKey: "gateway", worker.publicKey: "worker"], asserters: ["gateway"])

        let asGateway = try await RPCClient.connect(
            to: "secure", endpoints: server.boundEndpoints, security: .curve(gateway, serverPublicKey: serverKeys.publicKey), logger: logger)
        let reply = try await asGateway.call(TestEcho.self, EchoRequest(number: 1), principal: .user("alice"))
        #expect(reply.peer == "gateway")
        #expect(reply.principal == "user:alice")

        let asWorker = try await RPCClient.connect(
            to: "secure", endpoints: server.boundEndpoints, security: .curve(worker, serverPublicKey: serverKeys.publicKey), logger: logger)
        let forged = try await asWorker.call(TestEcho.self, EchoRequest(number: 2), principal: .user("alice"))
        #expect(forged.peer == "worker")
        #expect(forged.principal == "service:worker")

        await asGateway.close()
        await asWorker.close()
        await server.shutdown()
    }

    /// Only the operator's own key may claim the operator role: an asserter such as the gateway
    /// acts for users, and a compromised gateway key must not become an operator.
    @Test func onlyTheOperatorKeyClaimsTheOperatorRole() async throws {
        let gateway = try CurveKeyPair.generate()
        let operatorKeys = try CurveKeyPair.generate()
        let (server, serverKeys) = try await curveServer(
            admitting: [gateway.publicKey: "gateway", operatorKeys.publicKey: "operator"], asserters: ["gateway", "operator"])
        let asGateway = try await RPCClient.connect(
            to: "secure", endpoints: server.boundEndpoints, security: .curve(gateway, serverPublicKey: serverKeys.publicKey), logger: logger)
        let claimed = try await asGateway.call(TestEcho.self, EchoRequest(number: 1), principal: .operator("ops"))
        #expect(claimed.principal == "service:gateway")
        let asOperator = try await RPCClient.connect(
            to: "secure", endpoints: server.boundEndpoints, security: .curve(operatorKeys, serverPublicKey: serverKeys.publicKey), logger: logger)
        let real = try await asOperator.call(TestEcho.self, EchoRequest(number: 2), principal: .operator("ops"))
        #expect(real.principal == "operator:ops")
        await asGateway.close()
        await asOperator.close()
        await server.shutdown()
    }

    @Test func unknownKeyAndPlaintextClientAreRefused() async throws {
        let admitted = try CurveKeyPair.generate()
        let stranger = try CurveKeyPair.generate()
        let (server, serverKeys) = try await curveServer(admitting: [admitted.publicKey: "gateway"])

        let strangerClient = try await RPCClient.connect(
            to: "secure", endpoints: server.boundEndpoints, security: .curve(stranger, serverPublicKey: serverKeys.publicKey), logger: logger)
        // Never connected (the handshake was refused): unavailable, not a slow server.
        await #expect(throws: BusError(.unavailable, "the secure service is unreachable")) {
            _ = try await strangerClient.call(TestEcho.self, EchoRequest(number: 1), timeout: .milliseconds(800))
        }
        #expect(!strangerClient.isConnected)

        let plaintextClient = try await RPCClient.connect(to: "secure", endpoints: server.boundEndpoints, logger: logger)
        await #expect(throws: BusError.self) {
            _ = try await plaintextClient.call(TestEcho.self, EchoRequest(number: 1), timeout: .milliseconds(800))
        }

        // The server is unharmed: an admitted client still gets through.
        let good = try await RPCClient.connect(
            to: "secure", endpoints: server.boundEndpoints, security: .curve(admitted, serverPublicKey: serverKeys.publicKey), logger: logger)
        #expect(try await good.call(TestEcho.self, EchoRequest(number: 3)).number == 3)

        for client in [strangerClient, plaintextClient, good] { await client.close() }
        await server.shutdown()
    }
}
