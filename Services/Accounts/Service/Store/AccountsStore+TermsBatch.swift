import Bus
import Contracts
import Foundation
import Hex
import Postgres

/// One acceptance as the batch statement takes it: the user, the version in effect, the act's
/// idempotency key (scoped to the user), the client's address and agent, and the id its Audit
/// record will have.
public struct AcceptanceItem: Sendable, Equatable {
    public var user: UUID
    public var version: String
    public var key: String
    public var clientIP: String?
    public var userAgent: String?
    public var recordId: UUID

    public init(user: UUID, version: String, key: String, clientIP: String?, userAgent: String?, recordId: UUID) {
        self.user = user
        self.version = version
        self.key = key
        self.clientIP = clientIP
        self.userAgent = userAgent
        self.recordId = recordId
    }
}

/// A user after the batch statement: as stored now, and whether this call wrote the acceptance
/// (false: the key was used before, so the earlier call's acceptance stands and nothing was written).
public struct AcceptanceResult: Sendable, Equatable {
    public var user: StoredUser
    public var written: Bool
}

/// The SQL of `accounts.accept_terms_batch` and `accounts.accept_terms`: one prepared statement,
/// committed on its own, stores a whole batch of acceptances. It locks the batch's users (in id
/// order, so concurrent batches cannot deadlock), keeps each act's idempotency key, writes each
/// new act to the consent stream (``AccountsStore/consentStream``) with its IP address and user
/// agent, and moves each user's `tos_version` and `tos_accepted_at`: the acceptance is durable,
/// for Accounts and for Audit, when this one statement commits, and nothing is asked of Audit.
///
/// A user stored at sign-up whose acceptance the two-writer path left unrecorded (Audit did not
/// answer) counts this acceptance as the recorded one (`signup_receipt_id`), so the older version
/// is never recorded after the newer.
///
/// A user that does not exist (never did, or was deleted) has no row to lock, so nothing is
/// written for it: the deletion race of the two-writer path (an acceptance recorded after the
/// account's erasure) cannot happen, since a deletion locks the same row.
///
/// A user whose act was not written (its key was used before) is answered as `locked` read it: the
/// lock returns the row's latest committed version, and nothing in this statement changed it. Read
/// again by id, as it once was, every user of the batch cost an index probe for an answer that on a
/// wave is nearly always empty (about a tenth of the statement's CPU in `batch-parts.sh`).
///
/// The acts' place in the stream (`consent_order_key`, migration 0181) is taken once every lock is
/// held: the batch has its transaction id from its first user's lock, and an act of a later user
/// that committed while the batch waited for that user must stay before the batch's.
extension AccountsStore {
    /// Stores `items` in one statement; each existing user as it now is, by id. A user twice in
    /// `items` (two acts with different keys) is updated once and streamed twice.
    public func accept(_ items: [AcceptanceItem]) async throws -> [UUID: AcceptanceResult] {
        let parameters: [(any PostgresEncodable)?] = [
            PostgresArrayLiteral.of(items.map { Hex.uuid($0.user) }), PostgresArrayLiteral.of(items.map(\.version)),
            PostgresArrayLiteral.of(items.map(\.key)), PostgresArrayLiteral.of(items.map(\.clientIP)),
            PostgresArrayLiteral.of(items.map(\.userAgent)), PostgresArrayLiteral.of(items.map { Hex.uuid($0.recordId) }),
        ]
        return try await pool.withConnection { [sql = termsBatch.accepted] db in
            var results: [UUID: AcceptanceResult] = [:]
            for row in try db.query(sql, parameters: parameters) {
                let user = try StoredUser.decode(row)
                results[user.id] = AcceptanceResult(user: user, written: try row.decode(Bool.self, column: 13))
            }
            return results
        }
    }
}

/// The statement of ``AccountsStore/accept(_:)`` for one schema.
struct TermsBatchStatements: Sendable {
    let accepted: PostgresStatement

    init(schema: String) {
        let users = "\(schema).users"
        // `now_ms` is the transaction's time to the millisecond: the user's `tos_accepted_at`
        // and the record's time are the same instant.
        accepted = PostgresStatement(
            name: "\(schema)_accept_terms_batch",
            sql: """
                WITH a AS (
                    SELECT * FROM unnest($1::uuid[], $2::text[], $3::text[], $4::text[], $5::text[], $6::uuid[])
                        AS a(user_id, version, key, client_ip, user_agent, record_id)
                ), t AS (
                    SELECT (extract(epoch FROM date_trunc('milliseconds', now())) * 1000)::bigint AS now_ms
                ), locked AS MATERIALIZED (
                    SELECT \(StoredUser.columns(of: "u")) FROM \(users) u WHERE u.id IN (SELECT user_id FROM a) ORDER BY u.id FOR UPDATE
                ), key AS MATERIALIZED (
                    SELECT \(schema).consent_order_key() AS order_xid FROM (SELECT count(*) FROM locked) every_lock_held
                ), fresh AS (
                    INSERT INTO \(schema).consent_keys (user_id, key, version, recorded_ms)
                    SELECT DISTINCT ON (a.user_id, a.key) a.user_id, a.key, a.version, t.now_ms
                    FROM a JOIN locked ON locked.id = a.user_id, t
                    ORDER BY a.user_id, a.key
                    ON CONFLICT (user_id, key) DO NOTHING
                    RETURNING user_id, key
                ), streamed AS (
                    INSERT INTO \(schema).consent_outbox
                        (xid, kind, user_id, record_id, document_type, version, action, idempotency_key, recorded_ms, client_ip, user_agent)
                    SELECT key.order_xid, 'consent', a.user_id, a.record_id, 'terms_of_service', a.version, 'accept', a.key, t.now_ms,
                        a.client_ip, a.user_agent
                    FROM (SELECT DISTINCT ON (user_id, key) * FROM a ORDER BY user_id, key) a
                    JOIN fresh ON fresh.user_id = a.user_id AND fresh.key = a.key, key, t
                ), updated AS (
                    UPDATE \(users) AS u SET tos_version = a.version,
                        tos_accepted_at = timestamptz 'epoch' + t.now_ms * interval '1 millisecond', tos_declined_at = NULL,
                        signup_receipt_id = coalesce(u.signup_receipt_id, a.record_id)
                    FROM a JOIN fresh ON fresh.user_id = a.user_id AND fresh.key = a.key, t
                    WHERE u.id = a.user_id
                    RETURNING \(StoredUser.columns(of: "u"))
                )
                SELECT *, true FROM updated
                UNION ALL
                SELECT \(StoredUser.columns(of: "l")), false FROM locked l WHERE l.id NOT IN (SELECT id FROM updated)
                """)
    }
}
