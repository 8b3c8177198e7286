import Bus
import Contracts
import Foundation
import Hex
import Postgres

/// A batch in one statement: the rows, the head's move and the check that the head and the
/// subjects the rows were built on are still current, committed together in one round trip. The
/// statement goes in one pipeline (one implicit transaction) after two that lock the chain's head
/// and the batch's users (``BatchWriter/lockSubjects``): it starts, and takes its snapshot, only
/// once no erasure of those users is under way, and none can start before it commits.
extension BatchWriter {
    /// SQLSTATE raised by `audit.require_batch_state` (migration 0110): the head moved or a subject
    /// was erased; nothing was written.
    static let staleState = "CA001"

    /// Writes `batch` after `head` with `subjects` (from the cache) in one statement. Throws a
    /// ``PostgresError`` with ``staleState`` when the head or a subject is no longer what the rows
    /// were built on; the statement then wrote nothing.
    func append(
        _ batch: [PendingRecord], at now: Date, after head: ChainHead, subjects known: [UUID: Subject], on db: isolated PostgresConnection
    ) throws -> (receipts: [ConsentReceipt], head: ChainHead) {
        let rows = try NewRecords(batch, chain: chain, after: head, subjects: known, at: now)
        let results = try db.pipelineTransaction([
            PipelineCall(Self.lockHead, [chain]),
            PipelineCall(Self.lockSubjects, [PostgresArrayLiteral.of(known.keys.map { Hex.uuid($0) })]),
            PipelineCall(
                Self.appendRecords,
                rows.parameters + [rows.head.position, rows.head.hash, head.position, head.hash, PostgresArrayLiteral.of(rows.pseudonyms)]),
        ])
        let inserted = results[2].affectedRows
        guard inserted == rows.count else {
            throw BusError(.internal, "audit chain \(chain): \(inserted) of \(rows.count) records were appended")
        }
        return (rows.receipts, rows.head)
    }

    /// ``NewRecords/insertRecords`` with the head's move and the guard, `$17`–`$21`: the new head,
    /// the head the rows follow, the rows' pseudonyms.
    ///
    /// The head moves only from the head the rows follow; another writer of the chain that got
    /// there first holds its row until it commits, after which this `UPDATE` finds no row to move.
    /// The subjects are counted in the statement's snapshot, as the two-round-trip write reads them.
    /// `checked` raises (the whole statement is rolled back) unless the head moved and every
    /// pseudonym is still there. Without it, a moved head would still fail on the records' primary key, but
    /// an erased subject would not fail at all.
    static let appendRecords = PostgresStatement(
        name: "audit_append_records",
        sql: """
            WITH moved AS (
                UPDATE audit.chains SET head_position = $17::bigint, head_hash = $18::bytea
                WHERE chain = $1::int AND head_position = $19::bigint AND head_hash = $20::bytea
                RETURNING chain
            ), checked AS (
                SELECT audit.require_batch_state(
                    (SELECT count(*) FROM moved) = 1
                    AND (SELECT count(*) FROM audit.subjects WHERE pseudonym = ANY($21::uuid[])) = cardinality($21::uuid[])
                ) AS ok
            )
            \(NewRecords.insertSQL(from: "checked WHERE checked.ok"))
            """)
}
