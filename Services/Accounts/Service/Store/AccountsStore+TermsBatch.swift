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
/// order, so concurrent batches cannot deadlock), writes each act whose key the user's row does
/// not hold yet to the consent stream (``AccountsStore/consentStream``) with its IP address and
/// user agent, and moves each user's `tos_version` and `tos_accepted_at` and keeps the acts' keys
/// on the same row (`consent_keys`, a day; migration 0190): the acceptance is durable, for
/// Accounts and for Audit, when this one statement commits, and nothing is asked of Audit. A key's
/// row of its own cost an insert and two index entries per act, and a deletion a day later.
///
/// A user stored at sign-up whose acceptance the two-writer path left unrecorded (Audit did not
/// answer) counts this acceptance as the recorded one (`signup_receipt_id`), so the older version
/// is never recorded after the newer.
///
/// A user that does not exist (never did, or was deleted) has no row to lock, so nothing is
/// written for it: the deletion race of the two-writer path (an acceptance recorded after the
/// account's erasure) cannot happen, since a deletion locks the same row.
///
/// The acts' place in the stream (`consent_order_key`, migration 0181) is taken once every lock is
/// held: the batch has its transaction id from its first user's lock, and an act of a later user
/// that committed while the batch waited for that user must stay before the batch's.
extension AccountsStore {
    /// Stores `items` in one statement; each existing user as it now is, by id. A user twice in
    /// `items` (two acts with different keys) is updated once, to the later act's version, and
    /// streamed twice.
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
                    SELECT * FROM unnest($1::uuid[], $2::text[], $3::text[], $4::text[], $5::text[], $6::uuid[]) WITH ORDINALITY
                        AS a(user_id, version, key, client_ip, user_agent, record_id, n)
                ), t AS (
                    SELECT (extract(epoch FROM date_trunc('milliseconds', now())) * 1000)::bigint AS now_ms
                ), locked AS MATERIALIZED (
                    SELECT id, consent_keys FROM \(users) WHERE id IN (SELECT user_id FROM a) ORDER BY id FOR UPDATE
                ), key AS MATERIALIZED (
                    SELECT \(schema).consent_order_key() AS order_xid FROM (SELECT count(*) FROM locked) every_lock_held
                ), fresh AS MATERIALIZED (
                    SELECT DISTINCT ON (a.user_id, a.key) a.*
                    FROM a JOIN locked ON locked.id = a.user_id
                    WHERE NOT locked.consent_keys ? a.key
                    ORDER BY a.user_id, a.key, a.n
                ), streamed AS (
                    INSERT INTO \(schema).consent_outbox
                        (xid, kind, user_id, record_id, document_type, version, action, idempotency_key, recorded_ms, client_ip, user_agent)
                    SELECT key.order_xid, 'consent', f.user_id, f.record_id, 'terms_of_service', f.version, 'accept', f.key, t.now_ms,
                        f.client_ip, f.user_agent
                    FROM fresh f, key, t
                ), per_user AS (
                    SELECT f.user_id, jsonb_object_agg(f.key, t.now_ms) AS keys,
                        (array_agg(f.version ORDER BY f.n DESC))[1] AS version, (array_agg(f.record_id ORDER BY f.n DESC))[1] AS record_id
                    FROM fresh f, t GROUP BY f.user_id
                ), updated AS (
                    UPDATE \(users) AS u SET tos_version = p.version,
                        tos_accepted_at = timestamptz 'epoch' + t.now_ms * interval '1 millisecond', tos_declined_at = NULL,
                        signup_receipt_id = coalesce(u.signup_receipt_id, p.record_id),
                        consent_keys = \(schema).consent_keys_with(u.consent_keys, p.keys, t.now_ms)
                    FROM per_user p, t
                    WHERE u.id = p.user_id
                    RETURNING \(StoredUser.columns(of: "u"))
                )
                SELECT *, true FROM updated
                UNION ALL
                SELECT \(StoredUser.columns(of: "u")), false FROM \(users) u
                WHERE u.id IN (SELECT id FROM locked) AND u.id NOT IN (SELECT id FROM updated)
                """)
    }
}
