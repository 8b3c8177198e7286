import Bus
import Contracts
import Foundation
import Hex
import Postgres

/// Chains one run of Accounts' consent stream in one transaction together with Audit's position
/// in the stream (`audit.event_cursors`, publisher ``ConsentFollower/publisher``): the position is
/// locked first and must still be where the run starts, so a run is chained exactly once, even
/// with two instances following or after a crash between the commit and the next read.
///
/// An act chained before (its idempotency key is in `audit.records`: a retry, or an act the
/// two-writer path recorded) is not chained again. A page first goes without looking its keys up:
/// the unique index on the key refuses the insert of a repeat, and the follower then chains the
/// page again `findingRepeats` (as the batch writer does). The look-up on every page, a query with
/// a page of keys planned each time, was 8 µs of PostgreSQL's time per act in the gateway benchmark,
/// a tenth of it, for a repeat that is rare. One round trip opens the transaction, locks the
/// position and the chain's head, finds or creates the subjects (and finds the repeats when asked),
/// and one inserts the records, moves the head and the position and commits.
struct ConsentPage {
    let chain: Int
    let subjects: SubjectCache

    /// The position moved since it was read (another instance chained the run): nothing was written.
    struct PositionMoved: Error {}

    /// The position's columns, as ``ConsentPosition`` reads them.
    static let readPosition = PostgresStatement(
        name: "audit_consents_read_position",
        sql: "SELECT last_sequence, last_transaction, last_entry FROM audit.event_cursors WHERE publisher = $1")
    static let lockPosition = PostgresStatement(
        name: "audit_consents_lock_position",
        sql: "SELECT last_sequence, last_transaction, last_entry FROM audit.event_cursors WHERE publisher = $1 FOR UPDATE")
    /// `last_sequence` is left as it was: with the pair set it is no longer read.
    static let movePosition = PostgresStatement(
        name: "audit_consents_move_position",
        sql: """
            UPDATE audit.event_cursors SET last_transaction = $2::bigint, last_entry = $3::bigint, updated_at = now()
            WHERE publisher = $1
            """)

    /// Whether the locked position (`lockPosition`'s row) is still `expected`.
    private static func isStill(_ expected: ConsentPosition, _ rows: PostgresRows) throws -> Bool {
        guard let row = rows.first else { return false }
        return try ConsentPosition(row) == expected
    }

    /// Chains `records` (the acts of the entries after `from`, in order, the last at `to`) and moves
    /// the position to `to`. Without `findingRepeats`, a key chained before fails the insert with a
    /// unique violation (``isRepeat(_:)``) and nothing is written.
    func chain(
        _ records: [PendingRecord], from: ConsentPosition, to: ConsentStreamPosition, findingRepeats: Bool,
        on db: isolated PostgresConnection
    ) throws {
        let users = Array(Set(records.map(\.request.userId)))
        // Before any subject is read: a subject read before an erasure here must not return to the cache.
        let erasuresBefore = subjects.erasuresNoted
        let userIDs = PostgresArrayLiteral.of(users.map { Hex.uuid($0) })
        var opening = [
            PipelineCall(Self.lockPosition, [ConsentFollower.publisher]),
            PipelineCall(BatchWriter.lockHead, [chain]),
            PipelineCall(BatchWriter.lockSubjects, [userIDs]),
            PipelineCall(BatchWriter.upsertSubjects, [userIDs]),
        ]
        if findingRepeats {
            opening.append(PipelineCall(sql: BatchWriter.findRepeats, [PostgresArrayLiteral.of(records.map(\.idempotencyHash))]))
        }
        let found = try db.pipelinedTransaction(opening: opening) { db, results -> (closing: [PipelineCall], value: [UUID: Subject]) in
            guard try Self.isStill(from, results[0]) else { throw PositionMoved() }
            guard let row = results[1].first else { throw BusError(.internal, "audit chain \(chain) has no row") }
            let head = ChainHead(position: try row.decode(Int64.self, column: 0), hash: try row.decode([UInt8].self, column: 1))
            var found: [UUID: Subject] = [:]
            for row in results[3] {
                let (user, pseudonym, secret) = try row.decode(UUID.self, UUID.self, [UInt8].self)
                found[user] = Subject(pseudonym: pseudonym, secret: secret)
            }
            let missing = users.filter { found[$0] == nil }
            if !missing.isEmpty {
                for row in try db.query(BatchWriter.findSubjects, PostgresArrayLiteral.of(missing.map { Hex.uuid($0) })) {
                    let (user, pseudonym, secret) = try row.decode(UUID.self, UUID.self, [UInt8].self)
                    found[user] = Subject(pseudonym: pseudonym, secret: secret)
                }
            }
            var earlier: [String: ConsentReceipt] = [:]
            if findingRepeats {
                for row in results[4] { earlier[try row.decode(String.self, column: 0)] = try BatchWriter.receipt(row, from: 1) }
            }
            let rows = try NewRecords(records, chain: chain, after: head, subjects: found, at: Date(), earlier: earlier)
            var closing = [PipelineCall(Self.movePosition, [ConsentFollower.publisher, to.transaction, to.entry])]
            if !rows.isEmpty {
                closing =
                    [
                        PipelineCall(NewRecords.insertRecords, rows.parameters),
                        PipelineCall(BatchWriter.moveHead, [chain, rows.head.position, rows.head.hash]),
                    ] + closing
            }
            return (closing, found)
        }
        subjects.store(found, ifNoErasureSince: erasuresBefore)
    }

    /// Whether `error` is the insert's refusal of an idempotency key chained before: the page is
    /// to be chained again `findingRepeats`.
    static func isRepeat(_ error: any Error) -> Bool {
        guard let error = error as? PostgresError, error.isUniqueViolation else { return false }
        return error.constraint == nil || error.constraint == "records_idempotency"
    }

    /// Erases `user` (an account deletion, after every act before it is chained) and moves the
    /// position from `from` to the deletion's, `to`, in one transaction.
    func erase(_ user: UUID, from: ConsentPosition, to: ConsentStreamPosition, on db: isolated PostgresConnection) throws -> Int {
        defer { subjects.forget(user) }
        return try db.transaction { db in
            guard try Self.isStill(from, db.query(Self.lockPosition, ConsentFollower.publisher)) else { throw PositionMoved() }
            let erased = try db.query("SELECT audit.erase_subject($1)", user)[0].decode(Int.self, column: 0)
            try db.execute(Self.movePosition, ConsentFollower.publisher, to.transaction, to.entry)
            return erased
        }
    }
}
