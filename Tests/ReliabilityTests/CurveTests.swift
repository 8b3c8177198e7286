import Bus
import Contracts
import Foundation
import TestSupport
import Testing

extension ReliabilityTests {
    /// The whole stack on a CURVE bus with the keys `compass keys generate` makes: a client with an
    /// unknown key and a plaintext client get nothing from any service; an admitted peer that is not
    /// in `BUS_PRINCIPAL_ASSERTERS` acts as `service:<name>` whatever principal it sends.
    @Suite("Reliability: CURVE on the bus")
    struct CurveTests {
        static let services = ["Legal", "Audit", "Accounts", "Documents"]

        @Test func unknownAndPlaintextClientsAreRefusedAndForgedPrincipalsIgnored() async throws {
            let keys = try await Self.generatedKeys()
            let intruder = try CurveKeyPair.generate()
            let admitted = keys["BUS_ADMITTED_KEYS"]! + ",intruder=\(intruder.publicKey)"
            var settings: [String: [String: String]] = [:]
            for service in Self.services {
                var environment = ["BUS_SECRET_KEY": keys["\(service.uppercased())_SECRET_KEY"]!, "BUS_ADMITTED_KEYS": admitted]
                for peer in Self.services { environment["\(peer.uppercased())_PUBLIC_KEY"] = keys["\(peer.uppercased())_PUBLIC_KEY"]! }
                settings[service] = environment
            }
            let operatorKeys = try CurveKeyPair(secretKey: keys["OPERATOR_SECRET_KEY"]!)
            try await Stack.run(settings: settings) { stack in
                var refusals: [String] = []
                for service in Self.services {
                    let serverKey = keys["\(service.uppercased())_PUBLIC_KEY"]!
                    let endpoint = stack.rpc[service]!
                    let admittedClient = try await client(service, endpoint, .curve(operatorKeys, serverPublicKey: serverKey))
                    let unknownClient = try await client(service, endpoint, .curve(try CurveKeyPair.generate(), serverPublicKey: serverKey))
                    let plaintextClient = try await client(service, endpoint, .plaintext)
                    try await probe(service, admittedClient, timeout: .seconds(20))
                    for (label, refused) in [("unknown key", unknownClient), ("plaintext", plaintextClient)] {
                        let error = await #expect(throws: BusError.self, "\(service) served a \(label) client") {
                            try await probe(service, refused, timeout: .seconds(1))
                        }
                        #expect(error?.code == .deadlineExceeded || error?.code == .unavailable)
                        #expect(!refused.isConnected, "\(service) completed a handshake with a \(label) client")
                        refusals.append("\(service)/\(label)=\(error?.code.rawValue ?? "served")")
                    }
                    for client in [admittedClient, unknownClient, plaintextClient] { await client.close() }
                }

                // An admitted peer outside BUS_PRINCIPAL_ASSERTERS asserting the operator gets no
                // operator rights: it acts as service:intruder.
                let legalKey = keys["LEGAL_PUBLIC_KEY"]!
                let auditKey = keys["AUDIT_PUBLIC_KEY"]!
                let intruderLegal = try await client("Legal", stack.rpc["Legal"]!, .curve(intruder, serverPublicKey: legalKey))
                let operatorLegal = try await client("Legal", stack.rpc["Legal"]!, .curve(operatorKeys, serverPublicKey: legalKey))
                let intruderAudit = try await client("Audit", stack.rpc["Audit"]!, .curve(intruder, serverPublicKey: auditKey))
                let publish = LegalPublish.Request(
                    type: .privacyPolicy, version: "curve-\(UUID().uuidString.prefix(8))", content: "# P\n\n## 1. T\n\nText.\n", material: false)
                let forged = await #expect(throws: BusError.self) {
                    _ = try await intruderLegal.call(LegalPublish.self, publish, principal: .operator("forged"), timeout: .seconds(10))
                }
                #expect(forged?.code == .forbidden)
                let verifyForged = await #expect(throws: BusError.self) {
                    _ = try await intruderAudit.call(AuditVerify.self, Empty(), principal: .operator("forged"), timeout: .seconds(10))
                }
                #expect(verifyForged?.code == .forbidden)
                #expect(try await stack.count("SELECT count(*)::bigint FROM legal.versions WHERE version = $1", publish.version) == 0)

                // Nor may it act for users (BUS_SERVICES_ACTING_FOR_USERS: gateway, accounts): a
                // claimed user principal becomes service:intruder, which Audit, Documents and
                // Accounts refuse; the accounts key, on the list, is served.
                let someone = UUID()
                let claimed = Principal.user(someone.uuidString.lowercased())
                let documentsKey = keys["DOCUMENTS_PUBLIC_KEY"]!
                let accountsKey = keys["ACCOUNTS_PUBLIC_KEY"]!
                let accountsKeys = try CurveKeyPair(secretKey: keys["ACCOUNTS_SECRET_KEY"]!)
                let intruderDocuments = try await client("Documents", stack.rpc["Documents"]!, .curve(intruder, serverPublicKey: documentsKey))
                let intruderAccounts = try await client("Accounts", stack.rpc["Accounts"]!, .curve(intruder, serverPublicKey: accountsKey))
                let accountsDocuments = try await client("Documents", stack.rpc["Documents"]!, .curve(accountsKeys, serverPublicKey: documentsKey))
                var userRefusals: [String] = []
                let history = await #expect(throws: BusError.self) {
                    _ = try await intruderAudit.call(AuditHistory.self, .init(userId: someone), principal: claimed, timeout: .seconds(10))
                }
                let usage = await #expect(throws: BusError.self) {
                    _ = try await intruderDocuments.call(DocumentsUsage.self, .init(userId: someone), principal: claimed, timeout: .seconds(10))
                }
                let listing = await #expect(throws: BusError.self) {
                    _ = try await intruderDocuments.call(DocumentsList.self, .init(filter: .init(ownerId: someone)), timeout: .seconds(10))
                }
                let account = await #expect(throws: BusError.self) {
                    _ = try await intruderAccounts.call(AccountsGet.self, .init(userId: someone), principal: claimed, timeout: .seconds(10))
                }
                for (name, error) in [("audit.history", history), ("documents.usage", usage), ("documents.list", listing), ("accounts.get", account)]
                {
                    #expect(error?.code == .forbidden, "\(name)")
                    userRefusals.append("\(name)=\(error?.code.rawValue ?? "served")")
                }
                let served = try await accountsDocuments.call(DocumentsUsage.self, .init(userId: someone), timeout: .seconds(10))
                #expect(served.documents == 0)
                for client in [intruderDocuments, intruderAccounts, accountsDocuments] { await client.close() }
                print("RELIABILITY curve intruder-acting-for-users=\(userRefusals) accounts-key-usage=served")
                // The same request from the operator peer, which is an asserter, is honoured.
                _ = try await operatorLegal.call(LegalPublish.self, publish, principal: .operator("tests"), timeout: .seconds(10))
                #expect(try await stack.count("SELECT count(*)::bigint FROM legal.versions WHERE version = $1", publish.version) == 1)
                for client in [intruderLegal, operatorLegal, intruderAudit] { await client.close() }
                print(
                    "RELIABILITY curve refusals=\(refusals) forged-operator-publish=\(forged?.code.rawValue ?? "accepted") forged-operator-verify=\(verifyForged?.code.rawValue ?? "accepted")"
                )
            }
        }

        func client(_ service: String, _ endpoint: String, _ security: ClientSecurity) async throws -> RPCClient {
            var options = RPCClientOptions()
            options.heartbeatIntervalMs = 200
            options.heartbeatTimeoutMs = 800
            return try await RPCClient.connect(
                to: service.lowercased(), endpoints: [endpoint], security: security, options: options, logger: testLogger())
        }

        func probe(_ service: String, _ client: RPCClient, timeout: Duration) async throws {
            try await ReliabilityTests.FrozenPeerTests().probe(service, client, timeout: timeout)
        }

        /// The `.env` that `compass keys generate` prints, as a dictionary.
        static func generatedKeys() async throws -> [String: String] {
            let generated = try await ChildProcess.run(ChildProcess.product("compass"), ["keys", "generate"])
            guard generated.status == 0 else { throw TestSupportError("compass keys generate exited with \(generated.status)") }
            var keys: [String: String] = [:]
            for line in generated.output.split(separator: "\n") where !line.hasPrefix("#") {
                let parts = line.split(separator: "=", maxSplits: 1).map(String.init)
                if parts.count == 2 { keys[parts[0]] = parts[1] }
            }
            return keys
        }
    }
}
