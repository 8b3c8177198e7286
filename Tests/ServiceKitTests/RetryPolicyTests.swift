import Logging
import Retry
import Testing

/// The retry arithmetic every loop shares, with plain values.
@Suite struct RetryPolicyTests {
    @Test func doublingStartsAtTheFirstWaitAndStopsAtTheCeiling() {
        let backoff = Backoff(first: .milliseconds(100), maximum: .seconds(5))
        #expect((0...8).map { backoff.delay(after: $0) } == [100, 100, 200, 400, 800, 1600, 3200, 5000, 5000].map { .milliseconds($0) })
        // Far past any real streak the multiplication neither overflows nor traps.
        #expect(backoff.delay(after: 1_000) == .seconds(5) && backoff.delay(after: .max) == .seconds(5))
    }

    @Test func linearGrowsByTheFirstWait() {
        let backoff = Backoff(first: .milliseconds(20), maximum: .milliseconds(200), growth: .linear)
        #expect([1, 2, 3, 10, 11, 1_000_000].map { backoff.delay(after: $0) } == [20, 40, 60, 200, 200, 200].map { .milliseconds($0) })
        #expect(backoff.delay(after: .max) == .milliseconds(200))
    }

    /// The policies as they were written inline before there was one type: the same waits.
    @Test func thePoliciesKeepTheirWaits() {
        let poison = Backoff(first: .milliseconds(200), maximum: .seconds(10))
        #expect((1...7).map { poison.delay(after: $0) } == [200, 400, 800, 1600, 3200, 6400, 10_000].map { .milliseconds($0) })
        let follower = Backoff(first: .milliseconds(100), maximum: .seconds(5))
        // Was 50 ms × 2^min(n, 7), at most 5 s.
        #expect((1...8).map { follower.delay(after: $0) } == (1...8).map { min(.milliseconds(50) * (1 << min($0, 7)), .seconds(5)) })
    }

    @Test func aStreakWarnsFromItsThirdFailureAndReportsOnlyAWarnedRecovery() {
        var streak = FailureStreak()
        #expect([streak.failed(), streak.failed(), streak.failed(), streak.failed()] == [.debug, .debug, .warning, .warning])
        #expect(streak.count == 4)
        #expect(streak.succeeded() == 4 && streak.count == 0)
        #expect(streak.failed() == .debug && streak.failed() == .debug)
        #expect(streak.succeeded() == nil, "two failures a restart explains are not worth a recovery line")
        var eager = FailureStreak(warningFrom: 1)
        #expect(eager.failed() == .warning)
    }
}
