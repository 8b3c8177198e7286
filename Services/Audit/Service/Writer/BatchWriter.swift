import Bus
import Contracts
import Foundation
import Hex
import Metrics
import Postgres

/// Writes one batch of records to one chain in its own transaction, in one round trip when it can
/// and two when it must.
///
/// **One** (``append(_:at:after:subjects:on:)``): the chain's only writer knows the chain's head
/// from its last batch, and the batch's subjects are in the instance's ``SubjectCache``. One
/// statement, after two that lock the head and the users in the same pipeline and transaction,
/// then inserts the rows, moves the head and checks that neither had changed: on a batch's path that
/// is one database round trip and one commit instead of two round trips and five statements.
///
/// **Two** (``writeReadingState(_:at:findingRepeats:on:)``), for a chain's first batch, a batch with
/// a user not seen lately, one whose one statement found the head or a subject changed (another
/// writer on the same chain, an erasure), and a retry: one pipeline opens the transaction, locks
/// the chain's head and the users and finds or creates the subjects; the other inserts the rows,
/// moves the head and commits. The rows go as one `INSERT … SELECT FROM unnest(…)` rather than a `COPY`: `COPY`
/// cannot share a pipeline, and cost its own two round trips plus one for the head and one for the
/// commit.
///
/// Earlier records with the same idempotency keys are looked for only when `findingRepeats`: a
/// batch first goes without the look-up, and the unique index on the key refuses its insert if a
/// key was used before (the committer then runs it again with the look-up). A repeat is a retry,
/// rare; the look-up on every batch was a query per batch, and PostgreSQL kept its plan from when
/// the table was small: a sequential scan of every record, 35% of PostgreSQL's CPU under load.
///
/// Both ways hold ``lockSubjects`` (shared, per user of the batch) from before they read the
/// subjects until they commit, as a consent page does: `audit.erase_subject` takes it exclusively,
/// so an erasure waits for a batch that has read the user's subject (and then clears its records
/// too), and a batch waits for an erasure under way (and then finds the subject gone). Without it a
/// batch could commit a record with its IP address and user agent under a subject erased after the
/// batch read it, where no erasure finds it any more (`DirectWriteErasureLockTests`). The lock goes
/// in the same round trip as the rest, after the chain's head (every writer locks its head first,
/// then its users in id order, so writers and an erasure cannot deadlock on these locks).
///
/// Returns a receipt (unsigned) for every record of the batch, in order: new records, and the
/// original receipt for a repeated idempotency key (within the batch, or from before when
/// `findingRepeats`), with the chain's head after the commit.
struct BatchWriter: Sendable {
    let chain: Int
    let subjects: SubjectCache

    /// `audit_batch_writes_total{path}`: batches written in one statement, the two-round-trip way,
    /// and one-statement writes refused as stale (each followed by a two-round-trip one).
    private static let oneStatement = Counter(label: "audit_batch_writes_total", dimensions: [("path", "one_statement")])
    private static let twoRoundTrips = Counter(label: "audit_batch_writes_total", dimensions: [("path", "two_round_trips")])
    private static let stale = Counter(label: "audit_batch_writes_total", dimensions: [("path", "stale")])

    /// A subject that could be neither created nor found (erased by a concurrent request between
    /// our two statements): the batch is simply run again.
    struct SubjectRace: Error {}

    /// Writes `batch` after `head`, the chain's head as this writer last left it (nil when it does
    /// not know it: the first batch, or after a failure).
    func write(_ batch: [PendingRecord], at now: Date, findingRepeats: Bool, head: ChainHead?, on db: isolated PostgresConnection)
        throws -> (receipts: [ConsentReceipt], head: ChainHead)
    {
        let users = Array(Set(batch.map(\.request.userId)))
        let erasuresBefore = subjects.erasuresNoted  // before any subject is read: see SubjectCache.store
        if !findingRepeats, let head, let known = subjects.subjects(of: users) {
            do {
                let written = try append(batch, at: now, after: head, subjects: known, on: db)
                Self.oneStatement.increment()
                return written
            } catch let error as PostgresError where error.sqlState == Self.staleState {
                // The head moved or a subject went since this writer's last batch: read them again.
                Self.stale.increment()
            }
        }
        Self.twoRoundTrips.increment()
        let written = try writeReadingState(batch, users: users, at: now, findingRepeats: findingRepeats, on: db)
        // Committed: new subjects now exist for the next batch's one statement.
        subjects.store(written.subjects, ifNoErasureSince: erasuresBefore)
        return (written.receipts, written.head)
    }

    /// The two-round-trip write: reads (and locks) the head, locks the users and finds or creates
    /// their subjects first.
    private func writeReadingState(
        _ batch: [PendingRecord], users: [UUID], at now: Date, findingRepeats: Bool, on db: isolated PostgresConnection
    ) throws -> (receipts: [ConsentReceipt], head: ChainHead, subjects: [UUID: Subject]) {
        let userIDs = PostgresArrayLiteral.of(users.map { Hex.uuid($0) })
        var opening = [
            PipelineCall(Self.lockHead, [chain]),
            PipelineCall(Self.lockSubjects, [userIDs]),
            PipelineCall(Self.upsertSubjects, [userIDs]),
        ]
        if findingRepeats { opening.append(PipelineCall(sql: Self.findRepeats, [PostgresArrayLiteral.of(batch.map(\.idempotencyHash))])) }
        return try db.pipelinedTransaction(opening: opening) { db, results in
            guard let row = results[0].first else { throw BusError(.internal, "audit chain \(chain) has no row") }
            let head = ChainHead(position: try row.decode(Int64.self, column: 0), hash: try row.decode([UInt8].self, column: 1))
            var found: [UUID: Subject] = [:]
            for row in results[2] {
                let (user, pseudonym, secret) = try row.decode(UUID.self, UUID.self, [UInt8].self)
                found[user] = Subject(pseudonym: pseudonym, secret: secret)
            }
            let missing = users.filter { found[$0] == nil }
            if !missing.isEmpty {
                // Created by a concurrent batch after our statement's snapshot: a new statement sees it.
                for row in try db.query(Self.findSubjects, PostgresArrayLiteral.of(missing.map { Hex.uuid($0) })) {
                    let (user, pseudonym, secret) = try row.decode(UUID.self, UUID.self, [UInt8].self)
                    found[user] = Subject(pseudonym: pseudonym, secret: secret)
                }
            }
            var earlier: [String: ConsentReceipt] = [:]
            if findingRepeats {
                for row in results[3] { earlier[try row.decode(String.self, column: 0)] = try Self.receipt(row, from: 1) }
            }
            let rows = try NewRecords(batch, chain: chain, after: head, subjects: found, at: now, earlier: earlier)
            let closing =
                rows.isEmpty
                ? []
                : [
                    PipelineCall(NewRecords.insertRecords, rows.parameters),
                    PipelineCall(Self.moveHead, [chain, rows.head.position, rows.head.hash]),
                ]
            return (closing, (rows.receipts, rows.head, found))
        }
    }

    // Every batch runs these: prepared once per connection, so PostgreSQL parses and plans them
    // once instead of once per batch (parse and analysis were 5% of its CPU under load).
    static let lockHead = PostgresStatement(
        name: "audit_lock_head", sql: "SELECT head_position, head_hash FROM audit.chains WHERE chain = $1::int FOR UPDATE")
    static let moveHead = PostgresStatement(
        name: "audit_move_head", sql: "UPDATE audit.chains SET head_position = $2::bigint, head_hash = $3::bytea WHERE chain = $1::int")

    /// Holds, until the transaction commits, a shared lock per user that `audit.erase_subject` takes
    /// exclusively (migration 0130): an erasure waits for a writer that has read the user's subject
    /// (a consent page, a batch), and a writer waits for an erasure under way, so a record never
    /// lands under a subject erased after the writer read it. Its own statement, before the
    /// subjects are read: a statement's snapshot is taken before it waits for a lock. Users in
    /// order, so writers never deadlock.
    static let lockSubjects = PostgresStatement(
        name: "audit_lock_subjects",
        sql: """
            SELECT count(pg_advisory_xact_lock_shared(hashtextextended('audit.subject:' || user_id::text, 0)))
            FROM (SELECT DISTINCT unnest($1::uuid[]) AS user_id ORDER BY 1) users
            """)

    /// Inserts the subjects not yet known and returns every subject of the batch. The second
    /// half reads the statement's snapshot, which does not include the rows the first half inserts,
    /// so each user comes back once — or not at all if another transaction created it meanwhile
    /// (then ``findSubjects`` picks it up).
    ///
    /// New subjects are inserted in user-id order: two writers inserting the same new users wait
    /// on each other's uncommitted rows, and in one global order such waits cannot form a cycle
    /// (the same rule as Accounts' batch update; there a cycle was seen under load).
    ///
    /// New subjects get their pseudonym and secret from PostgreSQL's strong random source
    /// (`gen_random_uuid`; the secret is two of them, 244 random bits).
    ///
    /// The users already known, nearly all of them, are found first and only the others reach the
    /// `INSERT`: offered every user, it drew three random values and made a speculative insertion
    /// into the index for each before finding the conflict, and the final read looked each up again.
    static let upsertSubjects = PostgresStatement(
        name: "audit_upsert_subjects",
        sql: """
            WITH input AS (
                SELECT unnest($1::uuid[]) AS user_id
            ), known AS (
                SELECT s.user_id, s.pseudonym, s.secret FROM audit.subjects s JOIN input i USING (user_id)
            ), inserted AS (
                INSERT INTO audit.subjects (user_id, pseudonym, secret)
                SELECT user_id, gen_random_uuid(), uuid_send(gen_random_uuid()) || uuid_send(gen_random_uuid()) FROM input
                WHERE user_id NOT IN (SELECT user_id FROM known)
                ORDER BY user_id
                ON CONFLICT (user_id) DO NOTHING
                RETURNING user_id, pseudonym, secret
            )
            SELECT user_id, pseudonym, secret FROM inserted
            UNION ALL
            SELECT user_id, pseudonym, secret FROM known
            """)

    static let findSubjects = "SELECT user_id, pseudonym, secret FROM audit.subjects WHERE user_id = ANY($1::uuid[])"

    static let receiptColumns = "record_id, document_type, version, digest, action, recorded_ms, chain, position, hash"

    /// Not prepared: it runs only for a batch that repeats a key, and planned for its own keys it
    /// always takes the index (a plan kept from an empty table would not).
    static let findRepeats = """
        SELECT idempotency_hash, \(receiptColumns) FROM audit.records
        WHERE idempotency_hash = ANY($1::text[]) AND idempotency_hash IS NOT NULL
        """

    /// A receipt (unsigned) from the ``receiptColumns`` of a row, starting at `first`.
    static func receipt(_ row: PostgresRow, from first: Int) throws -> ConsentReceipt {
        let recordID = try row.decode(UUID.self, column: first)
        let type = try row.decode(String.self, column: first + 1)
        let action = try row.decode(String.self, column: first + 4)
        guard let documentType = LegalDocumentType(rawValue: type), let action = AcceptanceAction(rawValue: action) else {
            throw BusError(.internal, "record \(recordID) has an unknown type or action")
        }
        return ConsentReceipt(
            recordId: recordID, documentType: documentType, version: try row.decode(String.self, column: first + 2),
            digest: try row.decode(String.self, column: first + 3), action: action,
            recordedAt: Date(millisecondsSince1970: try row.decode(Int64.self, column: first + 5)),
            chain: try row.decode(Int.self, column: first + 6), position: try row.decode(Int64.self, column: first + 7),
            hash: Hex.string(try row.decode([UInt8].self, column: first + 8)), signature: "")
    }
}
