import Bus
import Contracts
import Foundation
import Locks
import Logging
import Metrics
import Postgres
import Retry
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
    /// A reader found Accounts answering while the follower may rest in its failure backoff:
    /// it reads again at once instead of up to 5 s later (at most one wake is kept).
    private let wake: AsyncStream<Void>.Continuation
    private let wakes: AsyncStream<Void>
    /// Whether Accounts answered the last call to it, a refusal included (with its database down
    /// it answers `unavailable`): reads do not wait for a stream they cannot reach at all (Accounts
    /// down, or an Audit run without it), which only a call with no answer (`deadline_exceeded`) says.
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
        (wakes, wake) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
    }

    func run() async throws {
        var failures = FailureStreak()
        var next: NextPage?
        while !Task.isShuttingDownGracefully {
            do {
                next = try await followOnce(prefetched: next)
                if let streak = failures.succeeded() {
                    logger.info("consent follower: following again", metadata: ["failures": "\(streak)"])
                }
            } catch {
                next?.reply.cancel()
                next = nil
                // A moved position (another instance chained the page) is the normal course of a
                // scaled-out Audit: counted, never a warning.
                let level = failures.failed()
                logger.log(
                    level: error is ConsentPage.PositionMoved ? .debug : level, "consent follower: failed, will retry",
                    metadata: ["error": "\(error)", "failures": "\(failures.count)"])
                let pause = Self.failureBackoff.delay(after: failures.count)
                await cancelWhenGracefulShutdown { await self.backOff(for: pause) }
            }
        }
        next?.reply.cancel()
    }

    /// After the n-th failure in a row: 100 ms, doubling to 5 s.
    static let failureBackoff = Backoff(first: .milliseconds(100), maximum: .seconds(5))

    /// Sleeps `duration`, or until a reader wakes the follower.
    private func backOff(for duration: Duration) async {
        await withTaskGroup(of: Void.self) { [wakes] group in
            group.addTask { try? await Task.sleep(for: duration) }
            group.addTask {
                for await _ in wakes { return }
            }
            await group.next()
            group.cancelAll()
        }
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
            reply = try await answered {
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
        let reply = try await answered { try await prefetched.reply.value }
        return reply.entries.first.map { $0.position > prefetched.after } ?? true ? reply : nil
    }

    /// A call to Accounts, noting whether it answered (``reachable``).
    private func answered<T: Sendable>(_ call: () async throws -> T) async throws -> T {
        do {
            let reply = try await call()
            reachable.withLock { $0 = true }
            return reply
        } catch let error as BusError {
            reachable.withLock { $0 = error.code != .deadlineExceeded }
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

    /// Waits, at most `limit`, until every act and deletion of `user` that Accounts has committed
    /// is chained, so that a read of their records (history, status, select) finds what they were
    /// told is recorded: their PostgREST insert answered with the row, their `accept-tos` answered
    /// 200 during an outage's recovery. Only this user's entries count (``AccountsConsentsPending``),
    /// so no read waits behind another user's backlog. A follower resting in its failure backoff
    /// is woken: Accounts has just answered this read, so the stream is reachable again.
    ///
    /// With Accounts unreachable (as the follower or a read last found it) the read goes on with
    /// what is chained: Audit serves reads while Accounts is down. With the user's acts still
    /// unchained at `limit` it throws `unavailable` with a retry-after: an answer without them
    /// would say they were never recorded (after a 20 s database stop, reads that did not wait
    /// missed every act acknowledged since PostgreSQL came back).
    func waitForActs(of user: UUID, within limit: Duration) async throws {
        let deadline = ContinuousClock.now + limit
        guard let pending = await pendingPosition(of: user, timeout: limit) else { return }
        guard try await !position().covers(pending) else { return }
        wake.yield()
        let backoff = Backoff(first: .milliseconds(2), maximum: .milliseconds(50))
        var polls = 0
        while ContinuousClock.now < deadline {
            polls += 1
            try await Task.sleep(for: min(backoff.delay(after: polls), max(.zero, deadline - ContinuousClock.now)))
            if try await position().covers(pending) { return }
        }
        throw BusError(
            .unavailable, "this user's latest acts are still being added to the audit trail; try again shortly",
            details: ["retryAfterSeconds": "1"])
    }

    /// Where `user`'s last entry in the stream is, or nil (none, or Accounts did not answer). An
    /// Accounts older than `accounts.consents_pending` is asked for the stream's last entry.
    private func pendingPosition(of user: UUID, timeout: Duration) async -> ConsentStreamPosition? {
        guard reachable.withLock({ $0 }) else { return nil }
        let audit = Principal.service(ServiceName.audit.rawValue)
        do {
            let client = try await accounts()
            do {
                return try await answered {
                    try await client.call(AccountsConsentsPending.self, .init(userId: user), principal: audit, timeout: timeout).latest
                }
            } catch let error as BusError where error.code == .invalidArgument {
                let request = try await position().request(limit: 1, waitMilliseconds: 0)
                return try await answered {
                    try await client.call(AccountsConsentsSince.self, request, principal: audit, timeout: timeout).latest
                }
            }
        } catch {
            logger.debug("consent follower: could not learn a user's last act before a read", metadata: ["error": "\(error)"])
            return nil
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
