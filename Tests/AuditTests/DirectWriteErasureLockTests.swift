import Contracts
import Foundation
import Postgres
import TestSupport
import Testing

@testable import AuditService

/// An erasure and a batch of `audit.record` / `audit.record_batch` (the direct write path, not the
/// consent follower) exclude each other as an erasure and a consent page do (`ErasureLockTests`):
/// the batch holds the user's lock shared from before it reads the subject until it commits, and
/// `audit.erase_subject` takes it exclusively. Without it, a batch that read the subject before an
/// erasure and committed after it left its record's IP address and user agent under a subject that
/// no longer exists, where no erasure finds them.
///
/// Both ways a batch is written are raced: one statement (the head and the subject kept from the
/// writer's last batch) and two round trips (both read first). The real ``BatchWriter`` runs on a
/// chain of its own in the database of the real Audit executable, as Audit's runtime role; each
/// party is a connection of its own, so a transaction can stay open between steps, and a party is
/// known to be waiting for another when PostgreSQL says so (`pg_blocking_pids`), not after a sleep.
@Suite(.timeLimit(.minutes(3))) struct DirectWriteErasureLockTests {
    enum WritePath: CaseIterable {
        case oneStatement, twoRoundTrips

        /// The chain its batches go to: not one of the executable's (0 to 3).
        var chain: Int { self == .oneStatement ? 900 : 901 }
    }

    /// Records with an IP address, user agent or idempotency hash whose subject is gone: what no
    /// erasure can ever clear.
    static let personalDataOfErasedSubjects = """
        SELECT count(*) FROM audit.records r
        WHERE (r.client_ip IS NOT NULL OR r.user_agent IS NOT NULL OR r.idempotency_hash IS NOT NULL)
          AND NOT EXISTS (SELECT 1 FROM audit.subjects s WHERE s.pseudonym = r.subject)
        """

    @Test func anErasureWaitsForABatchOfTheSameUserInFlightAndThenClearsItsRecord() async throws {
        try await AuditHarness.run { harness in
            let parties = try await Parties(harness)
            for path in WritePath.allCases {
                let user = UUID()
                let (writer, head) = try await parties.writerWithOneBatch(of: user, on: path)
                let racing = parties.record(of: user)
                // The batch goes as far as its insert and waits there: a transaction of the test's
                // has inserted a record with the same idempotency hash and keeps it open.
                try await parties.blocker.run { db in
                    try db.execute("BEGIN")
                    try db.execute(
                        """
                        INSERT INTO audit.records (chain, position, record_id, subject, document_type, version, digest, action,
                            recorded_ms, prev_hash, hash, idempotency_hash)
                        VALUES (999, 1, $1, $2, 'terms_of_service', 'blocker', 'blocker', 'accept', 0, '\\x00'::bytea, '\\x00'::bytea, $3)
                        """, UUID(), UUID(), racing.idempotencyHash)
                }
                let batch = Task { [head] in
                    try await parties.batch.run { db in try writer.write([racing], at: Date(), findingRepeats: false, head: head, on: db) }
                }
                #expect(try await parties.isWaiting(parties.batchPID, for: parties.blockerPID), "\(path): the batch reached its insert")
                let erasure = Task {
                    try await parties.erasure.run { db in try db.query("SELECT audit.erase_subject($1)", user)[0].decode(Int.self, column: 0) }
                }
                let erasureWaited = try await parties.isWaiting(parties.erasurePID, for: parties.batchPID)
                #expect(erasureWaited, "\(path): the erasure waits for the batch that has read the user's subject")
                try await parties.blocker.run { db in try db.execute("ROLLBACK") }
                let written = try await batch.value
                #expect(written.receipts.count == 1)
                // The erasure ran once the batch had committed, and cleared both of the user's records.
                #expect(try await erasure.value == 2, "\(path)")
                #expect(try await parties.count(Self.personalDataOfErasedSubjects) == 0, "\(path)")
                #expect(try await parties.count("SELECT count(*) FROM audit.subjects WHERE user_id = $1", user) == 0, "\(path)")
                let personal = "SELECT count(*) FROM audit.records WHERE chain = $1 AND client_ip IS NOT NULL"
                #expect(try await parties.count(personal, path.chain) == 0, "\(path)")
            }
            #expect(try await harness.verify().valid)
            await parties.close()
        }
    }

    @Test func aBatchWaitsForAnErasureOfTheSameUserUnderWayAndThenFindsTheSubjectGone() async throws {
        try await AuditHarness.run { harness in
            let parties = try await Parties(harness)
            for path in WritePath.allCases {
                let user = UUID()
                let (writer, head) = try await parties.writerWithOneBatch(of: user, on: path)
                let erasedPseudonym = try await parties.erasure.run { db in
                    try db.query("SELECT pseudonym FROM audit.subjects WHERE user_id = $1", user)[0].decode(UUID.self, column: 0)
                }
                // The erasure has run and not committed: it holds the user's lock.
                let erased = try await parties.erasure.run { db in
                    try db.execute("BEGIN")
                    return try db.query("SELECT audit.erase_subject($1)", user)[0].decode(Int.self, column: 0)
                }
                #expect(erased == 1)
                let racing = parties.record(of: user)
                let batch = Task { [head] in
                    try await parties.batch.run { db in try writer.write([racing], at: Date(), findingRepeats: false, head: head, on: db) }
                }
                let batchWaited = try await parties.isWaiting(parties.batchPID, for: parties.erasurePID)
                #expect(batchWaited, "\(path): the batch waits for the erasure under way")
                try await parties.erasure.run { db in try db.execute("COMMIT") }
                #expect(try await batch.value.receipts.count == 1)
                // The batch read the subjects after the erasure: its record is under a new subject,
                // which the next erasure clears; nothing is left under the erased one.
                #expect(try await parties.count(Self.personalDataOfErasedSubjects) == 0, "\(path)")
                let underErased = "SELECT count(*) FROM audit.records WHERE subject = $1 AND client_ip IS NOT NULL"
                #expect(try await parties.count(underErased, erasedPseudonym) == 0, "\(path)")
                let again = try await parties.erasure.run { db in
                    try db.query("SELECT audit.erase_subject($1)", user)[0].decode(Int.self, column: 0)
                }
                #expect(again == 1, "\(path): the record written after the erasure is under a subject an erasure finds")
                let personal = "SELECT count(*) FROM audit.records WHERE chain = $1 AND client_ip IS NOT NULL"
                #expect(try await parties.count(personal, path.chain) == 0, "\(path)")
            }
            #expect(try await harness.verify().valid)
            await parties.close()
        }
    }
}

/// The test's connections to the Audit database (as Audit's runtime role), each its own session:
/// the batch's, the erasure's, a blocker's and a monitor's.
private struct Parties: Sendable {
    let batch: PostgresConnection, erasure: PostgresConnection, blocker: PostgresConnection, monitor: PostgresConnection
    let batchPID: Int, erasurePID: Int, blockerPID: Int
    let terms: LegalVersionSummary

    init(_ harness: AuditHarness) async throws {
        guard let url = harness.auditRoles["DATABASE_URL"] else { throw TestSupportError("no DATABASE_URL for Audit") }
        let configuration = try PostgresConfiguration(url: url, applicationName: "compass-tests")
        func connect() async throws -> (PostgresConnection, Int) {
            let connection = try await PostgresConnection.connect(configuration: configuration, logger: testLogger())
            return (connection, try await connection.run { db in try db.query("SELECT pg_backend_pid()")[0].decode(Int.self, column: 0) })
        }
        (batch, batchPID) = try await connect()
        (erasure, erasurePID) = try await connect()
        (blocker, blockerPID) = try await connect()
        (monitor, _) = try await connect()
        terms = try await harness.legalClient.call(LegalCurrent.self, .init(type: .termsOfService)).summary
    }

    func close() async {
        for connection in [batch, erasure, blocker, monitor] { await connection.close() }
    }

    func record(of user: UUID) -> PendingRecord {
        PendingRecord(
            request: .init(
                userId: user, documentType: .termsOfService, version: terms.version, action: .accept, clientIP: "203.0.113.7",
                userAgent: "RecruitingCompass/1.0 iOS"),
            digest: terms.digest, idempotencyHash: "direct-write-erasure-lock:\(UUID())", reply: { _ in })
    }

    /// A writer of `path`'s chain that has written one record of `user`: the user's subject exists
    /// and the writer keeps it, and the head to give the next batch (nil for two round trips).
    func writerWithOneBatch(of user: UUID, on path: DirectWriteErasureLockTests.WritePath) async throws -> (BatchWriter, ChainHead?) {
        let writer = BatchWriter(chain: path.chain, subjects: SubjectCache(lifetime: .seconds(60)))
        let first = record(of: user)
        let written = try await batch.run { db in
            try db.execute("INSERT INTO audit.chains (chain) VALUES ($1::int) ON CONFLICT DO NOTHING", path.chain)
            return try writer.write([first], at: Date(), findingRepeats: false, head: nil, on: db)
        }
        #expect(writer.subjects.subjects(of: [user]) != nil, "the writer keeps the subject it created")
        return (writer, path == .oneStatement ? written.head : nil)
    }

    /// Whether the session `waiter` comes to wait for a lock the session `holder` holds, within 10 s.
    func isWaiting(_ waiter: Int, for holder: Int) async throws -> Bool {
        let deadline = ContinuousClock.now + .seconds(10)
        while ContinuousClock.now < deadline {
            let waiting = try await monitor.run { db in
                try db.query("SELECT $1::int = ANY(pg_blocking_pids($2::int))", holder, waiter)[0].decode(Bool.self, column: 0)
            }
            if waiting { return true }
            try await Task.sleep(for: .milliseconds(20))
        }
        return false
    }

    func count(_ sql: String, _ parameters: (any PostgresEncodable)?...) async throws -> Int {
        try await monitor.run { db in try db.query(sql, parameters: parameters)[0].decode(Int.self, column: 0) }
    }
}
