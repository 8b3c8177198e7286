import Bus
import Contracts
import Crypto
import Foundation
import Testing
import TestSupport

extension DocumentsSuites {
    /// The real Legal, Audit and Accounts executables beside Documents, so `account.deleted` comes
    /// from Accounts' own outbox exactly as in production.
    @Suite("Documents: account.deleted from the real Accounts service")
    struct AccountDeletionTests {
        @Test("deleting an account deletes its documents (live, and caught up after Documents was down), once, and leaves others alone")
        func cleanup() async throws {
            try await TestDatabase.withDatabase { database in
                let documentsRPC = ipcEndpoint()
                try await AccountsPeers.run(database, documentsRPC: documentsRPC) { accounts in
                    try await DocumentsHarness.run(
                        accounts: (accounts.accountsRPC, accounts.accountsEvents), database: database, rpc: documentsRPC
                    ) { harness in
                        let alice = try await accounts.signUp()
                        let bob = try await accounts.signUp()
                        let carol = try await accounts.signUp()
                        for owner in [alice, bob, carol] {
                            let first = try await harness.store(owner: owner, Samples.pdf)
                            _ = try await harness.store(owner: owner, Samples.png, type: .statsSheet, fileType: "image/png")
                            _ = try await harness.client.call(
                                DocumentsShareCreate.self, .init(documentId: first.id, expiresInSeconds: 600), principal: DocumentsHarness.user(owner))
                        }
                        let objects = try await harness.largeObjects()

                        // Accounts' deletion preview counts what Documents holds for the user.
                        let usage = try await harness.client.call(DocumentsUsage.self, .init(userId: alice), principal: .service("accounts"))
                        let preview = try await accounts.accounts.call(
                            AccountsDeletionPreview.self, .init(userId: alice), principal: .user(alice.uuidString.lowercased()))
                        let documents = try #require(preview.deleted.first { $0.category == "documents" })
                        #expect(documents.count == 2)
                        #expect(documents.bytes == usage.bytes && usage.bytes > 0)
                        let links = try #require(preview.deleted.first { $0.category == "share_links" })
                        #expect(links.count == 1)

                        // Live: Documents is up when the event is published.
                        try await accounts.delete(alice)
                        try await harness.waitUntilEmpty(alice)
                        #expect(try await harness.largeObjects() == objects - 2)

                        // Down: the event is published while Documents is stopped; it catches up at start.
                        await harness.stop()
                        try await accounts.delete(bob)
                        try await harness.start()
                        try await harness.waitUntilEmpty(bob)
                        #expect(try await harness.largeObjects() == objects - 4)

                        let carolUsage = try await harness.client.call(DocumentsUsage.self, .init(userId: carol), principal: .service("accounts"))
                        #expect(carolUsage.documents == 2 && carolUsage.shareLinks == 1)
                        let reports = try await database.pool.withConnection { db in
                            try db.query("SELECT user_id, documents, share_links FROM documents.account_cleanups ORDER BY applied_at").map {
                                try $0.decode(UUID.self, Int.self, Int.self)
                            }
                        }
                        #expect(reports.count == 2)
                        #expect(reports.map(\.0) == [alice, bob])
                        #expect(reports.allSatisfy { $0.1 == 2 && $0.2 == 1 })
                    }
                }
            }
        }
    }
}

extension DocumentsHarness {
    /// Waits (up to 20 s) until `owner` has no documents left.
    func waitUntilEmpty(_ owner: UUID) async throws {
        let end = ContinuousClock.now + .seconds(20)
        while ContinuousClock.now < end {
            let usage = try await client.call(DocumentsUsage.self, .init(userId: owner), principal: .service("accounts"))
            if usage.documents == 0 && usage.shareLinks == 0 { return }
            try await Task.sleep(for: .milliseconds(100))
        }
        throw TestSupportError("documents of \(owner) were not deleted within 20 s")
    }
}

/// Legal, Audit and Accounts, started as the Accounts tests start them.
struct AccountsPeers: Sendable {
    let accountsRPC: String
    let accountsEvents: String
    let accounts: RPCClient
    let legal: RPCClient

    /// `documentsRPC`: where Accounts asks Documents for its deletion preview counts.
    static func run(
        _ database: TestDatabaseInstance, documentsRPC: String = ipcEndpoint(), _ body: (AccountsPeers) async throws -> Void
    ) async throws {
        let (legalRPC, legalEvents, auditRPC, accountsRPC, accountsEvents) = (ipcEndpoint(), ipcEndpoint(), ipcEndpoint(), ipcEndpoint(), ipcEndpoint())
        var legalEnvironment = ServiceEnvironment.make(databaseURL: database.url, rpc: legalRPC, events: legalEvents)
        legalEnvironment["LOG_LEVEL"] = "error"
        var started: [PeerProcess] = []
        let result: Result<Void, any Error>
        do {
            started.append(try await PeerProcess("Legal", environment: legalEnvironment))
            var auditEnvironment = ServiceEnvironment.audit(
                databaseURL: database.url, rpc: auditRPC, legalRPC: legalRPC, legalEvents: legalEvents,
                signingKey: Curve25519.Signing.PrivateKey().rawRepresentation.base64EncodedString(), logLevel: "error")
            auditEnvironment["ACCOUNTS_RPC_ENDPOINTS"] = accountsRPC
            auditEnvironment["ACCOUNTS_EVENTS_ENDPOINTS"] = accountsEvents
            started.append(try await PeerProcess("Audit", environment: auditEnvironment))
            var environment = ServiceEnvironment.make(databaseURL: database.url, rpc: accountsRPC, events: accountsEvents, logLevel: "error")
            environment["LEGAL_RPC_ENDPOINTS"] = legalRPC
            environment["LEGAL_EVENTS_ENDPOINTS"] = legalEvents
            environment["AUDIT_RPC_ENDPOINTS"] = auditRPC
            environment["DOCUMENTS_RPC_ENDPOINTS"] = documentsRPC
            environment["ACCOUNTS_APPLE_JWKS"] = try Self.emptyKeySet()
            environment["ACCOUNTS_APPLE_BUNDLE_ID"] = "com.recruitingcompass.tests"
            environment["ACCOUNTS_SESSION_SIGNING_KEY"] = Curve25519.Signing.PrivateKey().rawRepresentation.base64EncodedString()
            started.append(try await PeerProcess("Accounts", environment: environment))
            let logger = testLogger()
            let peers = AccountsPeers(
                accountsRPC: accountsRPC, accountsEvents: accountsEvents,
                accounts: try await RPCClient.connect(to: "accounts", endpoints: [accountsRPC], logger: logger),
                legal: try await RPCClient.connect(to: "legal", endpoints: [legalRPC], logger: logger))
            do { result = .success(try await body(peers)) } catch { result = .failure(error) }
            await peers.accounts.close()
            await peers.legal.close()
        } catch {
            result = .failure(error)
        }
        if case .failure = result { for process in started { print(process.output) } }
        for process in started.reversed() {
            process.signal(SIGTERM)
            if await process.waitForExit(timeout: .seconds(15)) == nil { process.kill() }
        }
        try result.get()
    }

    /// Accounts needs a key set location to start; these tests never sign in with Apple.
    static func emptyKeySet() throws -> String {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("documents-tests-jwks-\(UUID().uuidString).json").path
        try Data(#"{"keys":[]}"#.utf8).write(to: URL(fileURLWithPath: path))
        return path
    }

    /// A complete sign-up (allowed state, the terms in effect); returns the new user's id.
    func signUp() async throws -> UUID {
        let version = try await legal.call(LegalCurrent.self, .init(type: .termsOfService)).summary.version
        let user = try await accounts.call(
            AccountsGetOrCreate.self,
            .init(appleId: "apple." + UUID().uuidString, email: "a@example.com", name: "Alex", state: "CA", eligibilityCertified: true,
                  tosVersion: version, clientIP: "203.0.113.9", userAgent: "tests"),
            principal: .service("gateway"), timeout: .seconds(30))
        guard let id = user.id else { throw TestSupportError("sign-up returned no user id") }
        return id
    }

    /// Requests and confirms the deletion of `user`'s account: Accounts publishes `account.deleted`.
    func delete(_ user: UUID) async throws {
        let principal = Principal.user(user.uuidString.lowercased())
        let request = try await accounts.call(AccountsRequestDeletion.self, .init(userId: user), principal: principal, timeout: .seconds(30))
        _ = try await accounts.call(
            AccountsConfirmDeletion.self, .init(userId: user, requestId: request.requestId), principal: principal, timeout: .seconds(30))
    }
}
