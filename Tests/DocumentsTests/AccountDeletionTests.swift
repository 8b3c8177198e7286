import Bus
import Contracts
import Crypto
import Foundation
import Postgres
import TestSupport
import Testing

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
                                DocumentsShareCreate.self, .init(documentId: first.id, expiresInSeconds: 600), principal: DocumentsHarness.user(owner)
                            )
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
                        try await harness.waitForLargeObjects(objects - 2)

                        // Down: the event is published while Documents is stopped; it catches up at start.
                        await harness.stop()
                        try await accounts.delete(bob)
                        try await harness.start()
                        try await harness.waitUntilEmpty(bob)
                        try await harness.waitForLargeObjects(objects - 4)

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

        /// Unlinking a user's large objects in the event's own transaction took one lock-table slot
        /// each: a user with more documents than the lock table holds (20,000 with PostgreSQL's
        /// default 100 connections; three times the slots here) made the consumer retry the event
        /// forever. Now the event queues them and the sweeper unlinks them in batches, and a
        /// restart in the middle resumes.
        @Test("a user with more documents than the lock table holds is deleted: every large object unlinked in batches, across a restart")
        func moreDocumentsThanTheLockTableHolds() async throws {
            try await TestDatabase.withDatabase { database in
                let documentsRPC = ipcEndpoint()
                try await AccountsPeers.run(database, documentsRPC: documentsRPC) { accounts in
                    try await DocumentsHarness.run(
                        accounts: (accounts.accountsRPC, accounts.accountsEvents), database: database,
                        settings: ["DOCUMENTS_LARGE_OBJECT_UNLINK_BATCH": "10"], rpc: documentsRPC
                    ) { harness in
                        let heavy = try await accounts.signUp()
                        let other = try await accounts.signUp()
                        let kept = try await harness.store(owner: other, Samples.pdf)
                        let before = try await harness.largeObjects()
                        // More large objects than the whole lock table holds (max_locks_per_transaction ×
                        // max_connections; 64 × 500 on the test cluster, which fitted 30,000 but not
                        // 50,000 unlinks in one transaction), so one transaction could not unlink them.
                        let slots = try await database.pool.withConnection { db in
                            try db.query("SELECT current_setting('max_locks_per_transaction')::int * current_setting('max_connections')::int")[0]
                                .decode(Int.self, column: 0)
                        }
                        let count = max(20_000, 3 * slots)
                        try await Self.insertDocuments(count, owner: heavy, pool: database.pool)
                        #expect(try await harness.largeObjects() == before + count)

                        let start = ContinuousClock.now
                        try await accounts.delete(heavy)
                        try await harness.waitUntilEmpty(heavy, within: .seconds(180))
                        let applied = ContinuousClock.now - start
                        // Stop while the sweeper is still unlinking (some batches done); it resumes at start.
                        let end = ContinuousClock.now + .seconds(60)
                        while try await Self.queued(database.pool) == count, ContinuousClock.now < end {
                            try await Task.sleep(for: .milliseconds(10))
                        }
                        await harness.stop()
                        let queuedAtStop = try await Self.queued(database.pool)
                        #expect(queuedAtStop > 0 && queuedAtStop < count, "stopped at \(queuedAtStop) of \(count) queued")
                        #expect(try await harness.largeObjects() == before + queuedAtStop)
                        try await harness.start()
                        try await harness.waitForLargeObjects(before, within: .seconds(600))
                        let drained = ContinuousClock.now - start
                        #expect(try await Self.queued(database.pool) == 0)
                        #expect(try await harness.get(.init(id: kept.id), as: other) == kept)
                        let cleanup = try await database.pool.withConnection { db in
                            try db.query("SELECT documents FROM documents.account_cleanups WHERE user_id = $1", heavy)[0].decode(Int.self, column: 0)
                        }
                        #expect(cleanup == count)
                        print(
                            "documents deleted: \(count), event applied in \(applied), queued at restart \(queuedAtStop), all large objects unlinked after \(drained)"
                        )
                    }
                }
            }
        }

        /// An `account.deleted` whose handler fails every time (here a trigger refuses its cleanup
        /// row, as a bug or a bad row would) used to stop the consumer for good. Now it is parked
        /// after its retries, the next user's deletion still applies, and once the cause is gone
        /// `compass events dead-letter retry` applies it.
        @Test("a poison account.deleted is parked, the next one applies, and compass events dead-letter retry applies it once fixed")
        func poisonEventParkedAndRetried() async throws {
            try await TestDatabase.withDatabase { database in
                let documentsRPC = ipcEndpoint()
                try await AccountsPeers.run(database, documentsRPC: documentsRPC) { accounts in
                    try await DocumentsHarness.run(
                        accounts: (accounts.accountsRPC, accounts.accountsEvents), database: database, rpc: documentsRPC
                    ) { harness in
                        let (alice, bob) = (try await accounts.signUp(), try await accounts.signUp())
                        for owner in [alice, bob] { _ = try await harness.store(owner: owner, Samples.pdf) }
                        try await database.pool.withConnection { db in
                            try db.executeScript(
                                """
                                CREATE TABLE documents.refused_cleanups (user_id uuid PRIMARY KEY);
                                CREATE FUNCTION documents.refuse_cleanup() RETURNS trigger LANGUAGE plpgsql AS $$
                                BEGIN
                                    IF EXISTS (SELECT 1 FROM documents.refused_cleanups WHERE user_id = NEW.user_id) THEN
                                        RAISE EXCEPTION 'cleanup refused by the test';
                                    END IF;
                                    RETURN NEW;
                                END $$;
                                CREATE TRIGGER refuse BEFORE INSERT ON documents.account_cleanups
                                    FOR EACH ROW EXECUTE FUNCTION documents.refuse_cleanup();
                                """)
                            try db.execute("INSERT INTO documents.refused_cleanups (user_id) VALUES ($1)", alice)
                        }
                        let start = ContinuousClock.now
                        try await accounts.delete(alice)
                        try await accounts.delete(bob)
                        try await harness.waitUntilEmpty(bob)
                        let movedOn = ContinuousClock.now - start
                        let usage = try await harness.client.call(DocumentsUsage.self, .init(userId: alice), principal: .service("accounts"))
                        #expect(usage.documents == 1)

                        var cli = ProcessInfo.processInfo.environment
                        cli["DOCUMENTS_RPC_ENDPOINTS"] = documentsRPC
                        let list = try await Self.compass(["events", "dead-letter", "list", "--services", "documents"], cli)
                        #expect(list.status == 0, "\(list.output)")
                        let lines = list.output.split(separator: "\n").filter { $0.hasPrefix("documents accounts #") }
                        #expect(lines.count == 1, "\(list.output)")
                        let line = String(lines.first ?? "")
                        #expect(line.contains("account.deleted parked attempts=5") && line.contains("cleanup refused by the test"), "\(line)")
                        let sequence = String(line.dropFirst("documents accounts #".count).prefix { $0.isNumber })

                        // Still refused: the retry fails, says why, and changes nothing.
                        let failed = try await Self.compass(["events", "dead-letter", "retry", "documents", "accounts", sequence], cli)
                        #expect(failed.status == 1 && failed.output.contains("cleanup refused by the test"), "\(failed.output)")
                        #expect(
                            try await harness.client.call(DocumentsUsage.self, .init(userId: alice), principal: .service("accounts")).documents == 1)

                        try await database.pool.withConnection { db in try db.execute("DELETE FROM documents.refused_cleanups") }
                        let retried = try await Self.compass(["events", "dead-letter", "retry", "documents", "accounts", sequence], cli)
                        #expect(retried.status == 0, "\(retried.output)")
                        #expect(retried.output.contains("applied documents accounts #\(sequence) account.deleted"), "\(retried.output)")
                        try await harness.waitUntilEmpty(alice)
                        let after = try await Self.compass(["events", "dead-letter", "list", "--services", "documents"], cli)
                        #expect(after.status == 0 && !after.output.contains("documents accounts #"), "\(after.output)")
                        print("poison account.deleted parked after 5 tries; the next event applied \(movedOn) after the first was published")
                    }
                }
            }
        }

        /// Runs the real `compass`: its exit status and everything it printed.
        static func compass(_ arguments: [String], _ environment: [String: String]) async throws -> (status: Int32, output: String) {
            let result = try await ChildProcess.run(ChildProcess.product("compass"), arguments, environment: environment)
            return (result.status, result.output + result.errors)
        }

        /// `count` small documents of `owner`, each with its own (4-byte) large object, 1,000 per
        /// transaction (creating a large object takes a lock-table slot too).
        static func insertDocuments(_ count: Int, owner: UUID, pool: PostgresPool) async throws {
            for first in stride(from: 0, to: count, by: 1000) {
                try await pool.withTransaction { db in
                    try db.execute(
                        """
                        INSERT INTO documents.documents (id, owner_id, type, title, file_url, file_type, version, created_at, length,
                                                         committed, lo_oid, sha256, state, updated_at)
                        SELECT u.id, $1, 'resume', 'bulk ' || g, 'documents/' || u.id || '/bulk.pdf', 'application/pdf', 1,
                               now() - g * interval '1 second', 4, 4, lo_from_bytea(0, '\\x25504446'::bytea), NULL, 'available', now()
                        FROM generate_series($2::int, $3::int) g CROSS JOIN LATERAL (SELECT gen_random_uuid() AS id, g AS n) u
                        """, owner, first, min(first + 1000, count) - 1)
                }
            }
        }

        static func queued(_ pool: PostgresPool) async throws -> Int {
            try await pool.withConnection { db in
                try db.query("SELECT count(*)::bigint FROM documents.large_object_removals")[0].decode(Int.self, column: 0)
            }
        }
    }
}

extension DocumentsHarness {
    /// Waits until the database holds exactly `count` large objects (the sweeper unlinks those of
    /// deleted accounts shortly after the event).
    func waitForLargeObjects(_ count: Int, within timeout: Duration = .seconds(20)) async throws {
        let end = ContinuousClock.now + timeout
        var last = -1
        while ContinuousClock.now < end {
            last = try await largeObjects()
            if last == count { return }
            try await Task.sleep(for: .milliseconds(100))
        }
        throw TestSupportError("\(last) large objects, not \(count), after \(timeout)")
    }

    /// Waits (up to `timeout`) until `owner` has no documents left.
    func waitUntilEmpty(_ owner: UUID, within timeout: Duration = .seconds(20)) async throws {
        let end = ContinuousClock.now + timeout
        while ContinuousClock.now < end {
            let usage = try await client.call(DocumentsUsage.self, .init(userId: owner), principal: .service("accounts"))
            if usage.documents == 0 && usage.shareLinks == 0 { return }
            try await Task.sleep(for: .milliseconds(100))
        }
        throw TestSupportError("documents of \(owner) were not deleted within \(timeout)")
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
        let (legalRPC, legalEvents, auditRPC, accountsRPC, accountsEvents) = (
            ipcEndpoint(), ipcEndpoint(), ipcEndpoint(), ipcEndpoint(), ipcEndpoint()
        )
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
            .init(
                appleId: "apple." + UUID().uuidString, email: "a@example.com", name: "Alex", state: "CA", eligibilityCertified: true,
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
