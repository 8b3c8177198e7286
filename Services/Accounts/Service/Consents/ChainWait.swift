import Foundation

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
        var pause = Duration.milliseconds(5)
        while ContinuousClock.now < deadline {
            if (try? await store.isChained(user: user, recordId: recordId)) == true { return true }
            try? await Task.sleep(for: min(pause, deadline - ContinuousClock.now))
            pause = min(pause * 2, .milliseconds(50))
        }
        return false
    }
}
