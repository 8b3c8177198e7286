import Bus
import Foundation
import Locks
import Logging
import Metrics
import ServiceKit

/// Counts the consent stream's entries Audit has not chained yet, every `interval`: the lag
/// metrics (`accounts_consent_backlog`, entries, counted up to one past the limit;
/// `accounts_consent_chain_lag_seconds`, the age of the first in stream order) and the backpressure. Past `limit` entries, new acts are refused with `unavailable`
/// and a retry hint until Audit catches up, so with Audit down the stream grows to about the
/// limit plus one interval of acts and no further. (Refusing rather than slowing down: a slowed
/// act still piles up while Audit stays down, and holds a connection while it waits.)
///
/// Also forgets idempotency keys older than a day.
final class ConsentBacklog: PeriodicSweep, Sendable {
    let store: AccountsStore
    let limit: Int
    let interval: Duration
    let logger: Logger
    private let counted = LockedValue(0)
    private let entries = Gauge(label: "accounts_consent_backlog")
    private let lag = Gauge(label: "accounts_consent_chain_lag_seconds")
    static let keyRetention: TimeInterval = 24 * 3600

    init(store: AccountsStore, limit: Int, interval: Duration, logger: Logger) {
        self.store = store
        self.limit = limit
        self.interval = interval
        self.logger = logger
    }

    /// The refusal an act gets while the backlog is past the limit; nil otherwise.
    func refusal() -> BusError? {
        let count = counted.withLock { $0 }
        guard count > limit else { return nil }
        return BusError(
            .unavailable, "consent records are \(count) acts behind; try again shortly", details: ["retryAfterSeconds": "5"])
    }

    func sweep() async {
        do {
            // One past the limit is all the refusal needs, and the gauge then reads "past it".
            let (count, oldest) = try await store.consentBacklog(countingUpTo: limit + 1)
            counted.withLock { $0 = count }
            entries.record(count)
            lag.record(oldest.map { max(0, Date().timeIntervalSince($0)) } ?? 0)
            if count > limit {
                logger.warning("consent backlog past its limit: acts are refused until Audit catches up", metadata: ["backlog": "\(count)"])
            }
            _ = try await store.pruneConsentKeys(before: Date().addingTimeInterval(-Self.keyRetention))
        } catch {
            logger.warning("could not count the consent backlog", metadata: ["error": "\(error)"])
        }
    }
}
