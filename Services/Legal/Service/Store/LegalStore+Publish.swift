import Bus
import Contracts
import Foundation
import Postgres
import ServiceKit

/// A version to publish, validated (see ``PublishValidation``) and digested.
public struct VersionDraft: Sendable, Equatable {
    public var type: LegalDocumentType
    public var version: String
    public var content: String
    public var digest: String
    /// `nil`: the instant of publication, to the second.
    public var lastUpdated: Date?
    /// `nil`: when the publishing transaction runs.
    public var effectiveAt: Date?
    public var material: Bool

    public init(type: LegalDocumentType, version: String, content: String, lastUpdated: Date?, effectiveAt: Date?, material: Bool) {
        self.type = type
        self.version = version
        self.content = content
        self.digest = PublishValidation.digest(of: content)
        self.lastUpdated = lastUpdated.map(Milliseconds.truncate)
        self.effectiveAt = effectiveAt.map(Milliseconds.truncate)
        self.material = material
    }
}

/// What a publish did: the version as stored, and whether this call created it (or found the
/// identical one an earlier call had published).
public struct PublishOutcome: Sendable, Equatable {
    public var summary: LegalVersionSummary
    public var created: Bool
}

extension LegalStore {
    /// Publishes `draft` and its `legal.published` event in one transaction, or returns the
    /// existing version when the same version string was already published with the same content
    /// and flags (an operator's retry). The same version string with anything different is
    /// `conflict`. An `effectiveAt` more than a few minutes in the past, or before the current
    /// version's (the new one would never be current), is `invalid_argument`.
    /// On any error nothing is written. Timestamps are kept to the millisecond, the bus's
    /// precision, so what is stored is exactly what callers are told.
    public func publish(_ draft: VersionDraft, by publisher: String, outbox: Outbox) async throws -> PublishOutcome {
        let table = self.table
        let outcome = try await pool.withTransaction { db -> PublishOutcome in
            if let existing = try Self.existing(draft.type, draft.version, in: table, on: db) {
                return PublishOutcome(summary: try Self.sameVersion(existing, as: draft), created: false)
            }
            let now = try Self.now(on: db)
            if let effectiveAt = draft.effectiveAt, effectiveAt < now.addingTimeInterval(-PublishValidation.retroactivityTolerance) {
                throw BusError(
                    .invalidArgument, "effectiveAt \(Timestamp.format(effectiveAt)) is in the past: a version cannot take effect retroactively")
            }
            if let effectiveAt = draft.effectiveAt, let inEffect = try Self.currentEffectiveAt(draft.type, now: now, in: table, on: db),
                effectiveAt < inEffect
            {
                throw BusError(
                    .invalidArgument,
                    "effectiveAt \(Timestamp.format(effectiveAt)) is before the current version's (\(Timestamp.format(inEffect))): it would never take effect"
                )
            }
            guard let inserted = try Self.insert(draft, now: now, by: publisher, into: table, on: db) else {
                // A concurrent publish of the same version committed first: judge against it.
                guard let raced = try Self.existing(draft.type, draft.version, in: table, on: db) else {
                    throw BusError(.unavailable, "a concurrent publish of \(draft.version) rolled back; try again")
                }
                return PublishOutcome(summary: try Self.sameVersion(raced, as: draft), created: false)
            }
            try outbox.append(type: LegalEvents.published, inserted, on: db)
            return PublishOutcome(summary: inserted, created: true)
        }
        if outcome.created { outbox.committed() }
        return outcome
    }

    /// Publishes each default whose type has no version yet, with its event, in one transaction
    /// under an advisory lock: a restart finds every type published and writes nothing, and two
    /// instances starting together seed once (the second waits, then finds the rows). Returns
    /// what this call published.
    public func seed(_ defaults: [VersionDraft], by publisher: String, outbox: Outbox) async throws -> [LegalVersionSummary] {
        let (table, lockKey) = (self.table, "compass.legal.seed.\(schema)")
        let seeded = try await pool.withTransaction { db -> [LegalVersionSummary] in
            try db.query("SELECT pg_advisory_xact_lock(hashtextextended($1, 0))", lockKey)
            let now = try Self.now(on: db)
            var seeded: [LegalVersionSummary] = []
            for draft in defaults {
                let present = try db.query("SELECT EXISTS (SELECT 1 FROM \(table) WHERE type = $1)", draft.type.rawValue)
                guard try !present[0].decode(Bool.self, column: 0) else { continue }
                // No row of this type, yet the insert may meet an operator's concurrent publish of
                // the same version string: theirs stands, and the default is not needed.
                guard let inserted = try Self.insert(draft, now: now, by: publisher, into: table, on: db) else { continue }
                try outbox.append(type: LegalEvents.published, inserted, on: db)
                seeded.append(inserted)
            }
            return seeded
        }
        if !seeded.isEmpty { outbox.committed() }
        return seeded
    }

    // MARK: Inside the transaction

    /// The database's transaction time, to the millisecond: one clock for every instance.
    static func now(on db: isolated PostgresConnection) throws -> Date {
        try db.query("SELECT date_trunc('milliseconds', now())")[0].decode(Date.self, column: 0)
    }

    static func existing(
        _ type: LegalDocumentType, _ version: String, in table: String, on db: isolated PostgresConnection
    ) throws -> LegalVersionSummary? {
        try db.query("SELECT \(VersionRow.columns) FROM \(table) WHERE type = $1 AND version = $2", type.rawValue, version)
            .first.map(VersionRow.summary)
    }

    /// When the version in effect at `now` took effect, if there is one.
    static func currentEffectiveAt(
        _ type: LegalDocumentType, now: Date, in table: String, on db: isolated PostgresConnection
    ) throws -> Date? {
        try db.query("SELECT max(effective_at) FROM \(table) WHERE type = $1 AND effective_at <= $2", type.rawValue, now)[0]
            .decode(Date?.self, column: 0)
    }

    /// Inserts `draft` unless its version string exists (then `nil`).
    static func insert(
        _ draft: VersionDraft, now: Date, by publisher: String, into table: String, on db: isolated PostgresConnection
    ) throws -> LegalVersionSummary? {
        let effectiveAt = draft.effectiveAt ?? now
        // The instant of publication, not a day: midnight UTC of a date showed as the day before
        // west of Greenwich. Whole seconds, so the JSON reads `…T17:42:05Z` as clients parse it.
        let lastUpdated = draft.lastUpdated ?? Date(timeIntervalSince1970: now.timeIntervalSince1970.rounded(.down))
        let rows = try db.query(
            """
            INSERT INTO \(table) (type, version, content, digest, material, last_updated, published_at, effective_at, published_by)
            VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)
            ON CONFLICT (type, version) DO NOTHING
            RETURNING \(VersionRow.columns)
            """, draft.type.rawValue, draft.version, draft.content, draft.digest, draft.material, lastUpdated, now,
            effectiveAt, publisher)
        return try rows.first.map(VersionRow.summary)
    }

    /// The existing version when `draft` repeats it (same content and `material`, and the same
    /// dates where the draft names them); otherwise `conflict`, saying what differs.
    static func sameVersion(_ existing: LegalVersionSummary, as draft: VersionDraft) throws -> LegalVersionSummary {
        var differences: [String] = []
        if existing.digest != draft.digest { differences.append("content") }
        if existing.material != draft.material { differences.append("material") }
        if let lastUpdated = draft.lastUpdated, !Milliseconds.same(lastUpdated, existing.lastUpdated) { differences.append("lastUpdated") }
        if let effectiveAt = draft.effectiveAt, !Milliseconds.same(effectiveAt, existing.effectiveAt) { differences.append("effectiveAt") }
        guard differences.isEmpty else {
            throw BusError(
                .conflict,
                "version \(draft.version) of \(draft.type.rawValue) was already published with a different "
                    + differences.joined(separator: ", ") + "; publish a new version string instead",
                details: ["type": draft.type.rawValue, "version": draft.version, "differs": differences.joined(separator: ",")])
        }
        return existing
    }
}

/// Dates at the bus's precision (RFC 3339 with milliseconds), compared as whole milliseconds
/// because the same instant can reach us as slightly different `Double`s (JSON, PostgreSQL).
enum Milliseconds {
    /// Whole milliseconds since 1970 (see `Date.millisecondsSince1970` in Bus).
    static func since1970(_ date: Date) -> Int64 { date.millisecondsSince1970 }

    static func truncate(_ date: Date) -> Date { Date(millisecondsSince1970: date.millisecondsSince1970) }

    static func same(_ a: Date, _ b: Date) -> Bool { a.millisecondsSince1970 == b.millisecondsSince1970 }
}
