import Bus
import Contracts
import Foundation
import TestSupport
import Testing

extension ReliabilityTests {
    /// PostgreSQL failover, the event CloudNativePG or Patroni handle in production: a primary and
    /// its synchronous standby (``StandbyPair``), the four services on the pair's multi-host URL
    /// (`target_session_attrs=read-write`). Under acceptance load the primary is SIGKILLed and the
    /// standby promoted; the same service processes carry on against it, and every acknowledged
    /// acceptance, publication, upload and deletion is there exactly once.
    @Suite("Reliability: PostgreSQL failover to a synchronous standby")
    struct FailoverTests {
        static let workers = 16

        @Test(
            "kill -9 of the primary under acceptance load, standby promoted: the services follow without a restart, nothing acknowledged lost or doubled"
        )
        func servicesFollowThePromotedStandby() async throws {
            try await StandbyPair.with { pair in
                try await pair.withDatabase { database in
                    try await Stack.run(on: database) { stack in try await Self.failOver(pair, stack) }
                }
            }
        }

        static func failOver(_ pair: StandbyPair, _ stack: Stack) async throws {
            for name in Stack.order {
                let url = stack.environments[name]?["DATABASE_URL"] ?? ""
                #expect(url.contains(",127.0.0.1:") && url.contains("target_session_attrs=read-write"), "\(name) is not on the pair's URL")
            }
            let pids = Stack.order.map { stack.process($0)?.process.processIdentifier }
            let terms = try await stack.currentTerms()
            var users: [UUID] = []
            for _ in 0..<workers { users.append(try await stack.signUp(terms: terms)) }
            try await stack.waitForChained()
            let baseline = try await acceptances(stack, users)
            let before = try await OtherWrites.make(stack, label: "before", terms: terms)

            let load = AcceptanceLoad(stack: stack, users: users, terms: terms)
            let running = load.start()
            try await withTimeout(.seconds(60), "the first 500 acknowledged acceptances") {
                while load.acknowledgedCount < 500 { try await Task.sleep(for: .milliseconds(5)) }
            }
            let primaryPort = try await serverPort(stack)
            // Commits on the primary wait for the standby: what makes an acknowledged write survive the primary.
            let synchronous = try await stack.count(
                "SELECT count(*)::bigint FROM pg_stat_replication WHERE sync_state = 'sync' AND current_setting('synchronous_commit') = 'on'")
            #expect(synchronous == 1, "the primary has no synchronous standby")
            // The clock starts once every process of the primary is gone (deploy/pg kill waits for that).
            try await pair.killPrimary()
            let killedAt = ContinuousClock.now
            load.markKill(at: killedAt)
            try await pair.promoteStandby()
            let promoted = ContinuousClock.now - killedAt
            let recovery = try await withTimeout(.seconds(60), "an acceptance sent after the kill being acknowledged") {
                while true {
                    if let first = load.firstAcknowledgedAfterKill { return first }
                    try await Task.sleep(for: .milliseconds(5))
                }
            }
            try await withTimeout(.seconds(60), "500 acknowledged acceptances after the kill") {
                while load.acknowledgedAfterKill < 500 { try await Task.sleep(for: .milliseconds(5)) }
            }
            load.stop()
            await running.value
            let after = try await OtherWrites.make(stack, label: "after", terms: terms)

            // The writes went to the promoted standby, through the same URL.
            let newPort = try await serverPort(stack)
            #expect(newPort != primaryPort, "the pair's URL still reaches the server on port \(primaryPort)")
            // The same processes, never restarted, did all of it.
            for (name, pid) in zip(Stack.order, pids) {
                let process = stack.process(name)?.process
                #expect(process?.isRunning == true && process?.processIdentifier == pid, "\(name) was restarted or died")
            }
            // Audit: each user's acceptances are its sign-up's plus one per acknowledged call (every
            // call was retried with its key until acknowledged, as the app does).
            let summary = load.summary
            #expect(summary.abandoned == 0, "\(summary.abandoned) calls were never acknowledged")
            try await stack.waitForChained()
            let counts = try await acceptances(stack, users)
            var lost = 0
            var duplicated = 0
            for (index, user) in users.enumerated() {
                let difference = (counts[user] ?? 0) - (baseline[user] ?? 0) - summary.perWorker[index]
                if difference < 0 { lost -= difference } else { duplicated += difference }
            }
            #expect(lost == 0 && duplicated == 0, "\(lost) acknowledged acceptances lost, \(duplicated) doubled")
            // Accounts: each user stands at the last acceptance Audit recorded.
            let standing = try await stack.count(
                """
                SELECT count(*)::bigint FROM accounts.users u WHERE u.id = ANY(string_to_array($1, ',')::uuid[]) AND u.tos_version = $2
                  AND round(extract(epoch FROM u.tos_accepted_at) * 1000)::bigint = (SELECT max(r.recorded_ms) FROM audit.records r
                    JOIN audit.subjects s ON s.pseudonym = r.subject WHERE s.user_id = u.id AND r.action = 'accept')
                """, users.map { $0.uuidString.lowercased() }.joined(separator: ","), terms)
            #expect(standing == workers, "\(workers - standing) users' Accounts standing differs from Audit's last acceptance")
            try await before.expectStoredOnce(stack)
            try await after.expectStoredOnce(stack)
            let verified = try await stack.audit.call(AuditVerify.self, Empty(), principal: Stack.operatorPrincipal, timeout: .seconds(300))
            #expect(verified.valid, "the audit chain does not verify after the failover")

            let milliseconds = recovery.components.seconds * 1000 + recovery.components.attoseconds / 1_000_000_000_000_000
            print("failover: first acknowledged acceptance \(milliseconds) ms after the kill")
            print(
                "RELIABILITY pg-failover acknowledged=\(summary.perWorker.reduce(0, +)) lost=\(lost) duplicated=\(duplicated) failed-attempts=\(summary.failures.map { "\($0.key)=\($0.value)" }.sorted()) promote=\(promoted) first-ack-after-kill=\(recovery) after-writes-retries=\(after.retries)"
            )
        }

        /// The port of the server the pair's URL reaches (the read-write one).
        static func serverPort(_ stack: Stack) async throws -> Int {
            try await stack.count("SELECT inet_server_port()::bigint")
        }

        /// Accept records in Audit per user.
        static func acceptances(_ stack: Stack, _ users: [UUID]) async throws -> [UUID: Int] {
            let ids = users.map { $0.uuidString.lowercased() }.joined(separator: ",")
            return try await stack.withDatabase { db in
                var counts: [UUID: Int] = [:]
                let sql = """
                    SELECT s.user_id, count(*)::bigint FROM audit.records r JOIN audit.subjects s ON s.pseudonym = r.subject
                    WHERE s.user_id = ANY(string_to_array($1, ',')::uuid[]) AND r.action = 'accept' GROUP BY s.user_id
                    """
                for row in try db.query(sql, ids) { counts[try row.decode(UUID.self, column: 0)] = try row.decode(Int.self, column: 1) }
                return counts
            }
        }
    }
}

/// One worker per user, each sending `accounts.accept_terms` with a new idempotency key once the
/// previous one was acknowledged, and retrying a failed call with the same key (as the app does)
/// until it is.
final class AcceptanceLoad: Sendable {
    struct Summary {
        var perWorker: [Int]
        var failures: [String: Int] = [:]
        var abandoned = 0
        var killedAt: ContinuousClock.Instant?
        var firstAfterKill: Duration?
        var acknowledgedAfterKill = 0
    }
    let stack: Stack
    let users: [UUID]
    let terms: String
    private let state: Locked<Summary>
    private let stopped = Flag()

    init(stack: Stack, users: [UUID], terms: String) {
        (self.stack, self.users, self.terms) = (stack, users, terms)
        state = Locked(Summary(perWorker: Array(repeating: 0, count: users.count)))
    }

    var summary: Summary { state.withLock { $0 } }
    var acknowledgedCount: Int { state.withLock { $0.perWorker.reduce(0, +) } }
    var acknowledgedAfterKill: Int { state.withLock { $0.acknowledgedAfterKill } }
    /// From the kill to the first acknowledgement of a call sent after it.
    var firstAcknowledgedAfterKill: Duration? { state.withLock { $0.firstAfterKill } }
    func markKill(at instant: ContinuousClock.Instant) { state.withLock { $0.killedAt = instant } }
    func stop() { stopped.set() }

    func start() -> Task<Void, Never> {
        Task {
            await withTaskGroup(of: Void.self) { group in
                for worker in users.indices { group.addTask { await self.run(worker) } }
            }
        }
    }

    private func run(_ worker: Int) async {
        var key = 0
        while !stopped.isSet {
            key += 1
            var acknowledged = false
            // About a minute of retries: the test's own deadlines end it long before.
            for _ in 0..<600 where !acknowledged {
                let sent = ContinuousClock.now
                do {
                    _ = try await stack.accounts.call(
                        AccountsAcceptTerms.self,
                        .init(userId: users[worker], tosVersion: terms, clientIP: "203.0.113.9", userAgent: "failover-tests"),
                        principal: Stack.gateway, idempotencyKey: "failover-\(worker)-\(key)", timeout: .seconds(5))
                    acknowledged = true
                    acknowledge(worker, sent: sent)
                } catch {
                    let code = (error as? BusError)?.code.rawValue ?? "other"
                    state.withLock { $0.failures[code, default: 0] += 1 }
                    try? await Task.sleep(for: .milliseconds(50))
                }
            }
            if !acknowledged { state.withLock { $0.abandoned += 1 } }
        }
    }

    private func acknowledge(_ worker: Int, sent: ContinuousClock.Instant) {
        let now = ContinuousClock.now
        state.withLock {
            $0.perWorker[worker] += 1
            guard let killedAt = $0.killedAt, sent >= killedAt else { return }
            $0.acknowledgedAfterKill += 1
            if $0.firstAfterKill == nil { $0.firstAfterKill = now - killedAt }
        }
    }
}

/// A publication, a document upload and an account deletion, each acknowledged, and afterwards
/// each found exactly once (the deletion: the user gone from Accounts and erased from Audit).
struct OtherWrites {
    let version: String
    let document: UUID
    let sha256: String
    let deletedUser: UUID
    /// Calls answered `unavailable` or past their deadline and sent again.
    let retries: Int

    static func make(_ stack: Stack, label: String, terms: String) async throws -> OtherWrites {
        let retries = Tally()
        let version = "fo-\(label)-\(UUID().uuidString.prefix(8).lowercased())"
        _ = try await retrying(retries) {
            try await stack.legal.call(
                LegalPublish.self,
                .init(
                    type: .privacyPolicy, version: version, content: "# Privacy\n\n## 1. Failover\n\nWritten \(label) the failover.\n",
                    material: false),
                principal: Stack.operatorPrincipal, timeout: .seconds(10))
        }
        let owner = try await retrying(retries) { try await stack.signUp(terms: terms) }
        let principal = Principal.user(owner.uuidString.lowercased())
        let bytes = Data("%PDF-1.4\n% written \(label) the failover\n".utf8) + Data(repeating: 0x20, count: 2048)
        let created = try await retrying(retries) {
            try await stack.documents.call(
                DocumentsCreate.self,
                .init(
                    ownerId: owner, type: .transcript, title: "Failover \(label)", fileType: "application/pdf", fileName: "t.pdf",
                    length: Int64(bytes.count)),
                principal: principal, timeout: .seconds(10))
        }
        let status = try await retrying(retries) {
            // `documents.append` is not retried by the client: a lost reply is answered by the status.
            let current = try await stack.documents.call(
                DocumentsUploadStatus.self, .init(id: created.id), principal: principal, timeout: .seconds(10))
            if current.complete { return current }
            return try await stack.documents.call(
                DocumentsAppend.self, .init(id: created.id, offset: 0), principal: principal, timeout: .seconds(10), attachments: [bytes])
        }
        let sha256 = try #require(status.document?.sha256, "the upload did not complete: \(status)")
        let deleted = try await retrying(retries) { try await stack.signUp(terms: terms) }
        try await retrying(retries) {
            // A deletion whose reply was lost is done: the user is gone.
            guard try await stack.count("SELECT count(*)::bigint FROM accounts.users WHERE id = $1", deleted) > 0 else { return }
            try await stack.deleteAccount(deleted)
        }
        return OtherWrites(version: version, document: created.id, sha256: sha256, deletedUser: deleted, retries: retries.count)
    }

    func expectStoredOnce(_ stack: Stack) async throws {
        let published = try await stack.count(
            "SELECT count(*)::bigint FROM legal.versions WHERE type = 'privacy_policy' AND version = $1", version)
        #expect(published == 1, "publication \(version): \(published) rows")
        let uploaded = try await stack.count(
            "SELECT count(*)::bigint FROM documents.documents WHERE id = $1 AND state = 'available' AND sha256 = $2", document, sha256)
        #expect(uploaded == 1, "upload \(document): \(uploaded) complete rows")
        #expect(try await stack.count("SELECT count(*)::bigint FROM accounts.users WHERE id = $1", deletedUser) == 0)
        // Accounts erases the deleted user from Audit after the deletion (retried by its sweep).
        try await withTimeout(.seconds(30), "the deleted user's erasure from Audit") {
            while try await stack.count("SELECT count(*)::bigint FROM audit.subjects WHERE user_id = $1", deletedUser) > 0 {
                try await Task.sleep(for: .milliseconds(50))
            }
        }
    }

    /// `body` again while it fails `unavailable` or past its deadline (a pool's connection to the
    /// dead primary is found broken at its next use), at most 100 times.
    @discardableResult
    static func retrying<T>(_ retries: Tally, _ body: () async throws -> T) async throws -> T {
        var attempt = 0
        while true {
            attempt += 1
            do { return try await body() } catch let error as BusError where [.unavailable, .deadlineExceeded].contains(error.code) && attempt < 100 {
                retries.add()
                try await Task.sleep(for: .milliseconds(100))
            }
        }
    }
}
