import Testing

@testable import ServiceKit

/// The consumer's parking rule (``PoisonCount``) with plain values: sequences are numbers.
@Suite struct PoisonCountTests {
    let policy = PoisonPolicy(attempts: 3, firstDelay: .milliseconds(200), maxDelay: .milliseconds(300))

    @Test func anEventIsRetriedWithGrowingPausesThenParkedOnItsLastTry() {
        var count = PoisonCount()
        #expect(count.failed(7, policy: policy) == .retry(attempt: 1, after: .milliseconds(200)))
        #expect(count.failed(7, policy: policy) == .retry(attempt: 2, after: .milliseconds(300)))
        #expect(count.failed(7, policy: policy) == .park(attempts: 3))
        count.parked()
        #expect(count.failing == nil)
        // The next failing event starts its own count.
        #expect(count.failed(8, policy: policy) == .retry(attempt: 1, after: .milliseconds(200)))
    }

    @Test func anotherEventFailingStartsAgainFromOne() {
        var count = PoisonCount()
        _ = count.failed(7, policy: policy)
        _ = count.failed(7, policy: policy)
        #expect(count.failed(9, policy: policy) == .retry(attempt: 1, after: .milliseconds(200)))
        #expect(count.failing?.sequence == 9)
    }

    @Test func theCountEndsOnlyOnceTheCursorPassesTheFailingEvent() {
        var count = PoisonCount()
        _ = count.failed(7, policy: policy)
        count.applied(through: 6)
        #expect(count.failing?.attempts == 1)
        count.applied(through: 7)
        #expect(count.failing == nil)
    }

    @Test func aPolicyOfOneTryParksAtTheFirstFailure() {
        var count = PoisonCount()
        #expect(count.failed(1, policy: PoisonPolicy(attempts: 1)) == .park(attempts: 1))
    }
}
