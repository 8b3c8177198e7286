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
/// are chained, none lost and none twice, when it reads again. Asking after a position is also
/// how Accounts learns it may delete the entries up to it.
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
        var next: NextPage?
        while !Task.isShuttingDownGracefully {
            do {
                next = try await followOnce(prefetched: next)
                failures = 0
            } catch {
                next?.reply.cancel()
                next = nil
                failures += 1
                let level: Logger.Level = failures > 3 && !(error is ConsentPage.PositionMoved) ? .warning : .debug
                logger.log(level: level, "consent follower: failed, will retry", metadata: ["error": "\(error)", "failures": "\(failures)"])
                let pause = Duration.milliseconds(50) * (1 << min(failures, 7))
                try? await cancelWhenGracefulShutdown { try await Task.sleep(for: min(pause, .seconds(5))) }
            }
        }
        next?.reply.cancel()
    }

    /// The read of the page after `after`, sent while the page before it is chained.
    struct NextPage: Sendable {
        let after: ConsentStreamPosition
        let reply: Task<AccountsConsentsSince.Reply, any Error>
    }

    /// Reads one page after the position (waiting for one when there is none), or takes the one
    /// `prefetched` when it starts there, and chains it. While a backlog waits (the page was full
    /// and more follow), first asks for the next page, telling Accounts that only the entries up
    /// to the position are chained, so the read and its bus hop overlap this page's chaining;
    /// returns that read. (Only then: while Audit keeps up, a read sent early would be answered at
    /// the first commit and pages would shrink to an act or two.)
    func followOnce(prefetched: NextPage? = nil) async throws -> NextPage? {
        let start = try await position()
        let reply: AccountsConsentsSince.Reply
        if let early = try await take(prefetched, at: start) {
            reply = early
        } else {
            reply = try await read { [self] in
                try await accounts().call(
                    AccountsConsentsSince.self, start.request(limit: Self.pageSize, waitMilliseconds: Self.wait),
                    principal: .service(ServiceName.audit.rawValue), timeout: .seconds(10))
            }
        }
        var next: NextPage?
        if reply.remaining > 0, case .at(let chained) = start, let last = reply.entries.last?.position {
            let request = AccountsConsentsSince.Request(after: chained, readAfter: last, limit: Self.pageSize)
            next = NextPage(
                after: last,
                reply: Task { [self] in
                    try await accounts().call(
                        AccountsConsentsSince.self, request, principal: .service(ServiceName.audit.rawValue), timeout: .seconds(10))
                })
        }
        do {
            try await chain(reply, from: start)
        } catch {
            next?.reply.cancel()
            throw error
        }
        return next
    }

    /// The page read ahead, if it starts at `start` and Accounts honoured its `readAfter`: a page
    /// that starts at or before its read position came from an Accounts that does not know the
    /// field (it pruned only what was chained), and is read again.
    private func take(_ prefetched: NextPage?, at start: ConsentPosition) async throws -> AccountsConsentsSince.Reply? {
        guard let prefetched else { return nil }
        guard start == .at(prefetched.after) else {
            prefetched.reply.cancel()
            return nil
        }
        let reply = try await read { try await prefetched.reply.value }
        return reply.entries.first.map { $0.position > prefetched.after } ?? true ? reply : nil
    }

    /// A read of the stream, noting whether Accounts answered.
    private func read(_ call: () async throws -> AccountsConsentsSince.Reply) async throws -> AccountsConsentsSince.Reply {
        do {
            let reply = try await call()
            reachable.withLock { $0 = true }
            return reply
        } catch {
            reachable.withLock { $0 = false }
            throw error
        }
    }

    /// Chains a page read after `start`, erasing a deleted account's records where its deletion
    /// comes in the stream.
    private func chain(_ reply: AccountsConsentsSince.Reply, from start: ConsentPosition) async throws {
        var position = start
        var acts: [PendingRecord] = []
        var last = start.stream
        for entry in reply.entries {
            guard entry.position > last else {
                throw BusError(.internal, "the consent stream went back from \(last) to \(entry.position)")
            }
            switch entry.kind {
            case .consent:
                acts.append(try await record(entry))
            case .deleted:
                position = try await flush(acts, from: position, to: last)
                acts = []
                let erased = try await pool.withConnection { [page, position] db in
                    try page.erase(entry.userId, from: position, to: entry.position, on: db)
                }
                position = .at(entry.position)
                chained.increment()
                logger.info("audit subject erased (account deleted)", metadata: ["user": "\(entry.userId)", "records": "\(erased)"])
            }
            last = entry.position
        }
        _ = try await flush(acts, from: position, to: last)
        behind.record(reply.remaining)
    }

    /// Chains `acts` (the entries after `from`, the last at `to`); the position afterwards.
    private func flush(_ acts: [PendingRecord], from: ConsentPosition, to: ConsentStreamPosition) async throws -> ConsentPosition {
        guard !acts.isEmpty else { return from }
        do {
            try await pool.withConnection { [page] db in try page.chain(acts, from: from, to: to, findingRepeats: false, on: db) }
        } catch let error where ConsentPage.isRepeat(error) {
            // An act chained before (a retry, or one the two-writer path recorded): its receipt stands.
            try await pool.withConnection { [page] db in try page.chain(acts, from: from, to: to, findingRepeats: true, on: db) }
        }
        chained.increment(by: Int64(acts.count))
        return .at(to)
    }

    /// The record an act is chained as, checked as `audit.record` checks one.
    private func record(_ entry: AccountsConsentsSince.Entry) async throws -> PendingRecord {
        guard let type = entry.documentType, let version = entry.version, let action = entry.action, let key = entry.idempotencyKey,
            let recordId = entry.recordId
        else { throw BusError(.internal, "consent stream entry \(entry.position) is incomplete") }
        let request = AuditRecord.Request(
            userId: entry.userId, documentType: type, version: version, action: action, clientIP: entry.clientIP, userAgent: entry.userAgent)
        try AuditHandlers.validate(request)
        let digest = try await catalog.version(type, version).digest
        return PendingRecord(
            request: request, digest: digest, idempotencyHash: AuditHandlers.idempotencyHash(entry.userId, key), signed: false,
            recordId: recordId, recordedMilliseconds: entry.recordedMilliseconds
        ) { _ in }
    }

    /// Waits, at most `limit`, until every act Accounts could read when it was called is
    /// chained: a read of a user's records right after their act (the gateway's PostgREST insert
    /// answering with the row, a status read after a sign-up) then finds it. The follower does
    /// the chaining; this only asks Accounts how far the stream goes and watches the position.
    /// With Accounts unreachable (as the follower last found it) the read goes on with what is chained.
    func caughtUp(within limit: Duration) async {
        guard reachable.withLock({ $0 }) else { return }
        let deadline = ContinuousClock.now + limit
        do {
            let reply = try await accounts().call(
                AccountsConsentsSince.self, try await position().request(limit: 1, waitMilliseconds: 0),
                principal: .service(ServiceName.audit.rawValue), timeout: limit)
            guard let latest = reply.latest else { return }
            var pause = Duration.milliseconds(2)
            while try await !position().covers(latest), ContinuousClock.now < deadline {
                try await Task.sleep(for: pause)
                pause = min(pause * 2, .milliseconds(50))
            }
        } catch {
            logger.debug("consent follower: could not learn the stream's end before a read", metadata: ["error": "\(error)"])
        }
    }

    /// Audit's position in the stream: every entry up to it is chained. A new follower starts
    /// before the first entry.
    func position() async throws -> ConsentPosition {
        try await pool.withConnection { db in
            try db.execute(
                """
                INSERT INTO audit.event_cursors (publisher, last_sequence, last_transaction, last_entry) VALUES ($1, 0, 0, 0)
                ON CONFLICT (publisher) DO NOTHING
                """, Self.publisher)
            return try ConsentPosition(
                try db.query(ConsentPage.readPosition, Self.publisher)[0])
        }
    }
}
