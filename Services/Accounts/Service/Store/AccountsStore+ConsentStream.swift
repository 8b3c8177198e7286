import Bus
import Contracts
import Foundation
import Hex
import Postgres

/// The consent stream (migration 0170, ``AccountsConsentsSince``): acts and deletions written in
/// the transactions that make them, numbered when read, deleted once Audit has chained them.
extension AccountsStore {
    /// Writes one act to the stream inside the caller's transaction (sign-up, decline, a sign-up
    /// acceptance left unrecorded by the two-writer path); the instant it is recorded at, which is
    /// the transaction's own time.
    static func streamAct(
        _ action: AcceptanceAction, user: UUID, version: String, key: String, recordId: UUID, clientIP: String?, userAgent: String?,
        schema: String, on db: isolated PostgresConnection
    ) throws -> Date {
        let milliseconds = try db.query(
            """
            INSERT INTO \(schema).consent_outbox
                (kind, user_id, record_id, document_type, version, action, idempotency_key, recorded_ms, client_ip, user_agent)
            VALUES ('consent', $1, $2, 'terms_of_service', $3, $4, $5,
                (extract(epoch FROM date_trunc('milliseconds', now())) * 1000)::bigint, $6, $7)
            RETURNING recorded_ms
            """, user, recordId, version, action.rawValue, key, clientIP, userAgent)[0].decode(Int64.self, column: 0)
        return Date(millisecondsSince1970: milliseconds)
    }

    /// Writes a deletion to the stream inside the deleting transaction, after clearing the user's
    /// IP addresses and agents still waiting in it and its idempotency keys: they do not outlive the
    /// account. (The acts themselves stay, so Audit chains them before it erases the user.)
    static func streamDeletion(of user: UUID, schema: String, on db: isolated PostgresConnection) throws {
        try db.execute(
            """
            UPDATE \(schema).consent_outbox SET client_ip = NULL, user_agent = NULL
            WHERE user_id = $1 AND (client_ip IS NOT NULL OR user_agent IS NOT NULL)
            """, user)
        try db.execute("DELETE FROM \(schema).consent_keys WHERE user_id = $1", user)
        try db.execute(
            """
            INSERT INTO \(schema).consent_outbox (kind, user_id, recorded_ms)
            VALUES ('deleted', $1, (extract(epoch FROM date_trunc('milliseconds', now())) * 1000)::bigint)
            """, user)
    }

    /// One page of the stream after `after`, and the highest sequence numbered. First numbers the
    /// committed entries not numbered yet (one numberer at a time, under an advisory lock, so the
    /// sequence is gap-free across instances) and deletes the entries up to `after`: the caller,
    /// Audit, asks after an entry only once it has chained it.
    public func consents(after: Int64, limit: Int) async throws -> (entries: [AccountsConsentsSince.Entry], latest: Int64) {
        let statements = consentStream
        return try await pool.withTransaction { db in
            try db.query(statements.lock)
            try db.execute(statements.number)
            if after > 0 { try db.execute(statements.prune, after) }
            let entries = try db.query(statements.page, after, limit).map(Self.entry)
            let latest = try db.query(statements.latest)[0].decode(Int64.self, column: 0)
            return (entries, latest)
        }
    }

    /// How many entries Audit has not chained yet, and when the oldest of them was written.
    public func consentBacklog() async throws -> (count: Int, oldest: Date?) {
        let sql = "SELECT count(*)::bigint, min(created_at) FROM \(consentStream.table)"
        return try await pool.withConnection { db in try db.query(sql)[0].decode(Int.self, Date?.self) }
    }

    /// Whether the act with this record id has left the stream: Audit has chained it.
    public func isChained(user: UUID, recordId: UUID) async throws -> Bool {
        let sql = "SELECT 1 FROM \(consentStream.table) WHERE user_id = $1 AND record_id = $2"
        return try await pool.withConnection { db in try db.query(sql, user, recordId).isEmpty }
    }

    /// Forgets idempotency keys used before `before` (a retry after that is recorded once by Audit all the same).
    public func pruneConsentKeys(before: Date, limit: Int = 10_000) async throws -> Int {
        let sql = """
            DELETE FROM \(consentStream.keys) WHERE (user_id, key) IN (
                SELECT user_id, key FROM \(consentStream.keys) WHERE recorded_ms < $1 LIMIT $2)
            """
        return try await pool.withConnection { db in try db.execute(sql, before.millisecondsSince1970, limit) }
    }

    private static func entry(_ row: PostgresRow) throws -> AccountsConsentsSince.Entry {
        let (sequence, kind, user, recordId, type, version, action, key, milliseconds, clientIP, userAgent) = try row.decode(
            Int64.self, String.self, UUID.self, UUID?.self, String?.self, String?.self, String?.self, String?.self, Int64.self,
            String?.self, String?.self)
        guard let kind = AccountsConsentsSince.Entry.Kind(rawValue: kind) else {
            throw BusError(.internal, "consent stream entry \(sequence) has an unknown kind \(kind)")
        }
        return AccountsConsentsSince.Entry(
            sequence: sequence, kind: kind, userId: user, recordId: recordId, documentType: type.flatMap(LegalDocumentType.init),
            version: version, action: action.flatMap(AcceptanceAction.init), idempotencyKey: key,
            recordedMilliseconds: milliseconds, clientIP: clientIP, userAgent: userAgent)
    }
}

/// The consent stream's statements for one schema.
struct ConsentStreamStatements: Sendable {
    let table: String
    let keys: String
    let lock: PostgresStatement
    let number: PostgresStatement
    let prune: PostgresStatement
    let page: PostgresStatement
    let latest: PostgresStatement

    init(schema: String) {
        table = "\(schema).consent_outbox"
        keys = "\(schema).consent_keys"
        lock = PostgresStatement(
            name: "\(schema)_consents_lock", sql: "SELECT pg_advisory_xact_lock(hashtextextended('compass.consents.\(schema)', 0))")
        // Rows are numbered in id order; a row whose transaction is still open is not seen here
        // and gets its number at a later read, after the ones already numbered.
        number = PostgresStatement(
            name: "\(schema)_consents_number",
            sql: """
                WITH base AS (SELECT coalesce(max(sequence), (SELECT last FROM \(schema).consent_stream_position)) AS last FROM \(table)),
                     next AS (SELECT id, row_number() OVER (ORDER BY id) AS n FROM \(table) WHERE sequence IS NULL ORDER BY id LIMIT 10000)
                UPDATE \(table) o SET sequence = base.last + next.n FROM next, base WHERE o.id = next.id
                """)
        // The position survives the pruning of every row: numbering goes on from it.
        prune = PostgresStatement(
            name: "\(schema)_consents_prune",
            sql: """
                WITH gone AS (DELETE FROM \(table) WHERE sequence <= $1::bigint RETURNING sequence)
                UPDATE \(schema).consent_stream_position SET last = greatest(last, (SELECT max(sequence) FROM gone))
                WHERE EXISTS (SELECT 1 FROM gone)
                """)
        page = PostgresStatement(
            name: "\(schema)_consents_page",
            sql: """
                SELECT sequence, kind, user_id, record_id, document_type, version, action, idempotency_key, recorded_ms,
                    client_ip, user_agent
                FROM \(table) WHERE sequence > $1::bigint ORDER BY sequence LIMIT $2::int
                """)
        latest = PostgresStatement(
            name: "\(schema)_consents_latest",
            sql: "SELECT coalesce(max(sequence), (SELECT last FROM \(schema).consent_stream_position)) FROM \(table)")
    }
}
