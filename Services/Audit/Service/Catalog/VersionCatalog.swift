import Bus
import Contracts
import Foundation
import Locks
import Logging
import Postgres

/// The legal versions the Audit service knows: a record must name one, and takes its digest.
///
/// Filled from `legal.published` (applied exactly once into `audit.legal_versions` by the event
/// consumer, which also catches up after downtime) and cached in memory. A miss falls back to the
/// table (another instance may have applied the event) and then to asking Legal directly, so a
/// client that accepts a version the moment it is published is not refused while the event is
/// still on its way.
///
/// Concurrent misses of one version share one look-up. Without that, the first burst of
/// acceptances after a publication (hundreds at once under load) each asked Legal for the whole
/// document, and on a busy machine the last of them waited past the call's deadline.
final class VersionCatalog: Sendable {
    private struct Key: Hashable {
        var type: LegalDocumentType
        var version: String
    }
    private let cache = LockedValue<[Key: LegalVersionSummary]>([:])
    /// The look-up under way for each missed version, awaited by every caller that missed it.
    private let lookUps = LockedValue<[Key: Task<LegalVersionSummary, any Error>]>([:])
    private let pool: PostgresPool
    private let legal: @Sendable () async throws -> RPCClient?

    /// - Parameter legal: the Legal service's client, or nil where none is reachable.
    init(pool: PostgresPool, legal: @escaping @Sendable () async throws -> RPCClient?) {
        self.pool = pool
        self.legal = legal
    }

    /// The version, or `invalid_argument` when Legal never published it.
    func version(_ type: LegalDocumentType, _ version: String) async throws -> LegalVersionSummary {
        let key = Key(type: type, version: version)
        if let known = cache.withLock({ $0[key] }) { return known }
        // Made under the lock, so the task's own removal (which takes it) runs after it is kept.
        let lookUp = lookUps.kept(key) {
            Task {
                defer { self.lookUps.withLock { $0[key] = nil } }
                return try await self.lookUp(type, version)
            }
        }
        return try await lookUp.value
    }

    /// The table, then Legal; remembers what it finds.
    private func lookUp(_ type: LegalDocumentType, _ version: String) async throws -> LegalVersionSummary {
        if let stored = try await pool.withConnection({ db in try Self.load(type, version, on: db) }) {
            remember(stored)
            return stored
        }
        if let client = try await legal() {
            do {
                let document = try await client.call(LegalVersion.self, .init(type: type, version: version), timeout: .seconds(5))
                try await pool.withConnection { db in try Self.insert(document.summary, on: db) }
                remember(document.summary)
                return document.summary
            } catch let error as BusError where error.code == .notFound {
                // Fall through: Legal says it does not exist.
            }
        }
        throw BusError(.invalidArgument, "\(type.rawValue) version \"\(version)\" was never published")
    }

    /// Every known version of `type` (for status), oldest effective first.
    func versions(of type: LegalDocumentType, on db: isolated PostgresConnection) throws -> [LegalVersionSummary] {
        try db.query(
            """
            SELECT document_type, version, digest, material, effective_at, published_at
            FROM audit.legal_versions WHERE document_type = $1 ORDER BY effective_at, published_at
            """, type.rawValue
        ).map(Self.summary)
    }

    private func remember(_ summary: LegalVersionSummary) {
        cache.withLock { $0[Key(type: summary.type, version: summary.version)] = summary }
    }

    /// Applies one `legal.published` event inside the consumer's transaction.
    ///
    /// The version is not put in the memory cache here: the transaction has not committed yet, and
    /// a record accepted through the cache in that window was followed by a status read (from the
    /// table) that did not know the version, so it said the user still had to accept. The next
    /// look-up finds the row once it is committed.
    func apply(_ envelope: Envelope, on db: isolated PostgresConnection) throws {
        guard envelope.type == LegalEvents.published else { return }
        try Self.insert(try envelope.decodePayload(LegalVersionSummary.self), on: db)
    }

    static func insert(_ summary: LegalVersionSummary, on db: isolated PostgresConnection) throws {
        try db.execute(
            """
            INSERT INTO audit.legal_versions (document_type, version, digest, material, effective_at, published_at)
            VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT DO NOTHING
            """, summary.type.rawValue, summary.version, summary.digest, summary.material, summary.effectiveAt,
            summary.publishedAt)
    }

    private static func load(_ type: LegalDocumentType, _ version: String, on db: isolated PostgresConnection) throws
        -> LegalVersionSummary?
    {
        try db.query(
            """
            SELECT document_type, version, digest, material, effective_at, published_at
            FROM audit.legal_versions WHERE document_type = $1 AND version = $2
            """, type.rawValue, version
        ).first.map(summary)
    }

    private static func summary(_ row: PostgresRow) throws -> LegalVersionSummary {
        let (type, version, digest, material, effective, published) = try row.decode(
            String.self, String.self, String.self, Bool.self, Date.self, Date.self)
        guard let documentType = LegalDocumentType(rawValue: type) else {
            throw BusError(.internal, "unknown document type \(type) in audit.legal_versions")
        }
        // last_updated is Legal's presentation detail; audit keeps the effective date in its place.
        return LegalVersionSummary(
            type: documentType, version: version, lastUpdated: effective, publishedAt: published, effectiveAt: effective,
            digest: digest, material: material)
    }
}
