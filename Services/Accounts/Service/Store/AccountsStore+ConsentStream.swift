import Bus
import Contracts
import Foundation
import Hex
import Postgres

/// The consent stream (migrations 0170 and 0180, ``AccountsConsentsSince``): acts and deletions
/// written in the transactions that make them, in (transaction, id) order, read once every
/// transaction that could write before them has ended, deleted once Audit has chained them.
extension AccountsStore {
    /// Writes one act to the stream inside the caller's transaction, which holds the user's lock
    /// (sign-up, decline, a sign-up acceptance left unrecorded by the two-writer path); the
    /// instant it is recorded at, which is the transaction's own time.
    static func streamAct(
        _ action: AcceptanceAction, user: UUID, version: String, key: String, recordId: UUID, clientIP: String?, userAgent: String?,
        schema: String, on db: isolated PostgresConnection
    ) throws -> Date {
        let milliseconds = try db.query(
            """
            INSERT INTO \(schema).consent_outbox
                (xid, kind, user_id, record_id, document_type, version, action, idempotency_key, recorded_ms, client_ip, user_agent)
            VALUES (\(schema).consent_order_key(), 'consent', $1, $2, 'terms_of_service', $3, $4, $5,
                (extract(epoch FROM date_trunc('milliseconds', now())) * 1000)::bigint, $6, $7)
            RETURNING recorded_ms
            """, user, recordId, version, action.rawValue, key, clientIP, userAgent)[0].decode(Int64.self, column: 0)
        return Date(millisecondsSince1970: milliseconds)
    }

    /// Writes a deletion to the stream inside the deleting transaction (which holds the user's
    /// lock), after clearing the user's IP addresses and agents still waiting in it and its
    /// idempotency keys: they do not outlive the account. (The acts themselves stay, so Audit
    /// chains them before it erases the user.)
    static func streamDeletion(of user: UUID, schema: String, on db: isolated PostgresConnection) throws {
        try db.execute(
            """
            UPDATE \(schema).consent_outbox SET client_ip = NULL, user_agent = NULL
            WHERE user_id = $1 AND (client_ip IS NOT NULL OR user_agent IS NOT NULL)
            """, user)
        try db.execute("DELETE FROM \(schema).consent_keys WHERE user_id = $1", user)
        try db.execute(
            """
            INSERT INTO \(schema).consent_outbox (xid, kind, user_id, recorded_ms)
            VALUES (\(schema).consent_order_key(), 'deleted', $1,
                (extract(epoch FROM date_trunc('milliseconds', now())) * 1000)::bigint)
            """, user)
    }

    /// One page of the stream after `after`, the last entry readable now and how many readable
    /// entries follow the page. First deletes the entries up to `chained` (by default `after`;
    /// and, for an Audit still at a position of the numbered stream, those numbered up to
    /// `numbered`): the caller, Audit, has chained them. `pruned` is where this instance's last
    /// pruning ended: every row up to it is gone, so the deletion's index scan starts there and
    /// not among the dead entries before it. Each statement on its own, the pruning and the page
    /// in one round trip, and none holds a lock or a transaction id while the page is read; a
    /// page shorter than `limit` is everything readable, so only a full one asks how far the
    /// stream goes (a second round trip).
    public func consents(
        after: ConsentStreamPosition, chained: ConsentStreamPosition? = nil, numbered: Int64? = nil, pruned: ConsentStreamPosition = .start,
        limit: Int
    ) async throws -> (entries: [AccountsConsentsSince.Entry], latest: ConsentStreamPosition?, remaining: Int) {
        let statements = consentStream
        let chained = min(chained ?? after, after)
        var calls: [PipelineCall] = []
        if chained > pruned {
            calls.append(PipelineCall(statements.prune, [pruned.transaction, pruned.entry, chained.transaction, chained.entry]))
        }
        if let numbered { calls.append(PipelineCall(statements.pruneNumbered, [numbered])) }
        calls.append(PipelineCall(statements.page, [after.transaction, after.entry, limit]))
        let count = limit + AccountsConsentsSince.remainingCountLimit
        return try await pool.withConnection { [calls] db in
            let results = try db.pipeline(calls).map { try $0.get() }
            let entries = try results[results.count - 1].map(Self.entry)
            guard entries.count == limit, let last = entries.last else { return (entries, entries.last?.position, 0) }
            let (transaction, entry, readable) = try db.query(statements.summary, after.transaction, after.entry, count)[0]
                .decode(Int64?.self, Int64?.self, Int.self)
            let latest = transaction.flatMap { transaction in entry.map { ConsentStreamPosition(transaction: transaction, entry: $0) } }
            return (entries, max(latest ?? last.position, last.position), max(0, readable - entries.count))
        }
    }

    /// How many entries Audit has not chained yet, counted up to `limit`, and when the first of
    /// them in stream order was written (migration 0210: by the stream's index, not its heap).
    public func consentBacklog(countingUpTo limit: Int) async throws -> (count: Int, oldest: Date?) {
        try await pool.withConnection { [consentStream] db in
            try db.query(consentStream.backlog, limit)[0].decode(Int.self, Date?.self)
        }
    }

    /// The position of `user`'s last entry still in the stream (nil: none is), by the stream's
    /// user index: what a read of their records waits for Audit to cover.
    public func lastPendingConsent(of user: UUID) async throws -> ConsentStreamPosition? {
        let sql = "SELECT xid::text::bigint, id FROM \(consentStream.table) WHERE user_id = $1 ORDER BY xid DESC, id DESC LIMIT 1"
        return try await pool.withConnection { db in
            try db.query(sql, user).first.map { row in
                let (transaction, entry) = try row.decode(Int64.self, Int64.self)
                return ConsentStreamPosition(transaction: transaction, entry: entry)
            }
        }
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
        let (transaction, id, kind, user, recordId, type, version, action, key, milliseconds, clientIP, userAgent) = try row.decode(
            Int64.self, Int64.self, String.self, UUID.self, UUID?.self, String?.self, String?.self, String?.self, String?.self,
            Int64.self, String?.self, String?.self)
        let position = ConsentStreamPosition(transaction: transaction, entry: id)
        guard let kind = AccountsConsentsSince.Entry.Kind(rawValue: kind) else {
            throw BusError(.internal, "consent stream entry \(position) has an unknown kind \(kind)")
        }
        return AccountsConsentsSince.Entry(
            position: position, kind: kind, userId: user, recordId: recordId, documentType: type.flatMap(LegalDocumentType.init),
            version: version, action: action.flatMap(AcceptanceAction.init), idempotencyKey: key,
            recordedMilliseconds: milliseconds, clientIP: clientIP, userAgent: userAgent)
    }
}

/// The consent stream's statements for one schema. A position's transaction travels as a
/// `bigint` (`xid8` has no cast from it, so through text).
struct ConsentStreamStatements: Sendable {
    let table: String
    let keys: String
    let prune: PostgresStatement
    let pruneNumbered: PostgresStatement
    let page: PostgresStatement
    let summary: PostgresStatement
    let backlog: PostgresStatement

    init(schema: String) {
        table = "\(schema).consent_outbox"
        keys = "\(schema).consent_keys"
        // The page, its summary and the pruning are functions (migration 0200) that keep to the
        // (xid, id) index whatever the table's statistics say.
        prune = PostgresStatement(
            name: "\(schema)_consents_prune",
            sql: "SELECT \(schema).consents_prune($1::bigint::text::xid8, $2::bigint, $3::bigint::text::xid8, $4::bigint)")
        pruneNumbered = PostgresStatement(
            name: "\(schema)_consents_prune_numbered", sql: "DELETE FROM \(table) WHERE sequence <= $1::bigint")
        page = PostgresStatement(
            name: "\(schema)_consents_page",
            sql: "SELECT * FROM \(schema).consents_page($1::bigint::text::xid8, $2::bigint, $3::int)")
        summary = PostgresStatement(
            name: "\(schema)_consents_summary",
            sql: "SELECT * FROM \(schema).consents_summary($1::bigint::text::xid8, $2::bigint, $3::int)")
        backlog = PostgresStatement(name: "\(schema)_consents_backlog", sql: "SELECT * FROM \(schema).consents_backlog($1::int)")
    }
}
