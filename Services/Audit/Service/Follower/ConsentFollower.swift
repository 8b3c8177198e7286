import Bus
import Contracts
import Foundation
import Locks
import Logging
import Metrics
import Postgres
import ServiceKit
import ServiceLifecycle

/// Chains Accounts' acts: follows Accounts' consent stream (``AccountsConsentsSince``) from
/// Audit's position in it, in pages, in stream order. A page's acts are chained in one
/// transaction with the position (``ConsentPage``); an account deletion erases the user in its
/// own, after every act before it, so no act of a deleted account is chained after its erasure.
///
/// The fast path is the long poll: asked with nothing new, Accounts answers when an act commits
/// (or after a second), so an act is chained a few milliseconds after it is acknowledged while
/// Audit keeps up. While Audit is down, stopped or behind, the acts wait in Accounts' table and
/// are chained, none lost and none twice, when it reads again. Asking after `n` is also how
/// Accounts learns it may delete the entries up to `n`.
///
/// An entry Audit cannot chain (a version Legal never published, a field it refuses) stops the
/// follower at that entry, retried with backoff and logged: skipping it would lose an act, and
/// the lag alert (`audit_consent_entries_behind`, Accounts' `accounts_consent_chain_lag_seconds`)
/// tells an operator.
final class ConsentFollower: Service, Sendable {
    /// The position's key in `audit.event_cursors`.
    static let publisher = "accounts.consents"
    static let pageSize = 1000
    static let wait = 1000

    let pool: PostgresPool
    let accounts: @Sendable () async throws -> RPCClient
    let catalog: VersionCatalog
    let page: ConsentPage
    let logger: Logger
    private let behind = Gauge(label: "audit_consent_entries_behind")
    private let chained = Counter(label: "audit_consent_entries_chained_total")
    /// Whether the follower's last call to Accounts was answered: reads do not wait for a stream
    /// they cannot reach (Accounts down, or an Audit run without it).
    private let reachable = LockedValue(false)

    init(
        pool: PostgresPool, accounts: @escaping @Sendable () async throws -> RPCClient, catalog: VersionCatalog, chain: Int,
        subjects: SubjectCache, logger: Logger
    ) {
        self.pool = pool
        self.accounts = accounts
        self.catalog = catalog
        self.page = ConsentPage(chain: chain, subjects: subjects)
        self.logger = logger
    }

    func run() async throws {
        var failures = 0
        while !Task.isShuttingDownGracefully {
            do {
                try await followOnce()
                failures = 0
            } catch {
                failures += 1
                let level: Logger.Level = failures > 3 && !(error is ConsentPage.PositionMoved) ? .warning : .debug
                logger.log(level: level, "consent follower: failed, will retry", metadata: ["error": "\(error)", "failures": "\(failures)"])
                let pause = Duration.milliseconds(50) * (1 << min(failures, 7))
                try? await cancelWhenGracefulShutdown { try await Task.sleep(for: min(pause, .seconds(5))) }
            }
        }
    }

    /// Reads one page after the position (waiting for one when there is none) and chains it.
    func followOnce() async throws {
        let after = try await position()
        let reply: AccountsConsentsSince.Reply
        do {
            reply = try await accounts().call(
                AccountsConsentsSince.self, .init(after: after, limit: Self.pageSize, waitMilliseconds: Self.wait),
                principal: .service(ServiceName.audit.rawValue), timeout: .seconds(10))
            reachable.withLock { $0 = true }
        } catch {
            reachable.withLock { $0 = false }
            throw error
        }
        var position = after
        var acts: [PendingRecord] = []
        for entry in reply.entries {
            guard entry.sequence == position + Int64(acts.count) + 1 else {
                throw BusError(.internal, "the consent stream skipped from \(position + Int64(acts.count)) to \(entry.sequence)")
            }
            switch entry.kind {
            case .consent:
                acts.append(try await record(entry))
            case .deleted:
                position = try await flush(acts, after: position)
                acts = []
                let erased = try await pool.withConnection { [page, position] db in
                    try page.erase(entry.userId, after: position, sequence: entry.sequence, on: db)
                }
                position = entry.sequence
                chained.increment()
                logger.info("audit subject erased (account deleted)", metadata: ["user": "\(entry.userId)", "records": "\(erased)"])
            }
        }
        position = try await flush(acts, after: position)
        behind.record(max(0, reply.latestSequence - position))
    }

    /// Chains `acts` (the entries after `after`); the position afterwards.
    private func flush(_ acts: [PendingRecord], after: Int64) async throws -> Int64 {
        guard !acts.isEmpty else { return after }
        let last = after + Int64(acts.count)
        try await pool.withConnection { [page] db in try page.chain(acts, after: after, last: last, on: db) }
        chained.increment(by: Int64(acts.count))
        return last
    }

    /// The record an act is chained as, checked as `audit.record` checks one.
    private func record(_ entry: AccountsConsentsSince.Entry) async throws -> PendingRecord {
        guard let type = entry.documentType, let version = entry.version, let action = entry.action, let key = entry.idempotencyKey,
            let recordId = entry.recordId
        else { throw BusError(.internal, "consent stream entry \(entry.sequence) is incomplete") }
        let request = AuditRecord.Request(
            userId: entry.userId, documentType: type, version: version, action: action, clientIP: entry.clientIP, userAgent: entry.userAgent)
        try AuditHandlers.validate(request)
        let digest = try await catalog.version(type, version).digest
        return PendingRecord(
            request: request, digest: digest, idempotencyHash: AuditHandlers.idempotencyHash(entry.userId, key), signed: false,
            recordId: recordId, recordedMilliseconds: entry.recordedMilliseconds
        ) { _ in }
    }

    /// Waits, at most `limit`, until every act Accounts had committed when it was called is
    /// chained: a read of a user's records right after their act (the gateway's PostgREST insert
    /// answering with the row, a status read after a sign-up) then finds it. The follower does
    /// the chaining; this only asks Accounts how far the stream goes and watches the position.
    /// With Accounts unreachable (as the follower last found it) the read goes on with what is chained.
    func caughtUp(within limit: Duration) async {
        guard reachable.withLock({ $0 }) else { return }
        let deadline = ContinuousClock.now + limit
        do {
            let after = try await position()
            let reply = try await accounts().call(
                AccountsConsentsSince.self, .init(after: after, limit: 1, waitMilliseconds: 0),
                principal: .service(ServiceName.audit.rawValue), timeout: limit)
            var pause = Duration.milliseconds(2)
            while try await position() < reply.latestSequence, ContinuousClock.now < deadline {
                try await Task.sleep(for: pause)
                pause = min(pause * 2, .milliseconds(50))
            }
        } catch {
            logger.debug("consent follower: could not learn the stream's end before a read", metadata: ["error": "\(error)"])
        }
    }

    /// Audit's position in the stream: every entry up to it is chained.
    func position() async throws -> Int64 {
        try await pool.withConnection { db in
            try db.execute(
                "INSERT INTO audit.event_cursors (publisher, last_sequence) VALUES ($1, 0) ON CONFLICT (publisher) DO NOTHING",
                Self.publisher)
            return try db.query("SELECT last_sequence FROM audit.event_cursors WHERE publisher = $1", Self.publisher)[0]
                .decode(Int64.self, column: 0)
        }
    }
}
