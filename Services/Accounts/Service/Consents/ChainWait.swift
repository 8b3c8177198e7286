import Foundation
import Retry

/// Waits, at most `limit`, until Audit has chained an act (its row has left the consent stream),
/// for the calls whose callers then read its signed receipt. Polls the row, from every 5 ms up to
/// every 50 ms: the wait ends within a few milliseconds of the chaining on whichever instance
/// Audit asked, and costs nothing on the batch path, which does not wait.
struct ChainWait: Sendable {
    let store: AccountsStore
    let limit: Duration

    /// True when chained within the limit; false when the limit passed (the act is stored all the same).
    @discardableResult
    func wait(user: UUID, recordId: UUID) async -> Bool {
        let deadline = ContinuousClock.now + limit
        let backoff = Backoff(first: .milliseconds(5), maximum: .milliseconds(50))
        var polls = 0
        while ContinuousClock.now < deadline {
            if (try? await store.isChained(user: user, recordId: recordId)) == true { return true }
            polls += 1
            try? await Task.sleep(for: min(backoff.delay(after: polls), deadline - ContinuousClock.now))
        }
        return false
    }
}
