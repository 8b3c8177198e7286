import ServiceKit
import Testing

/// The one rule every follower of an outbox stream applies events by, with plain values.
@Suite struct EventOrderTests {
    @Test func theNextNumberIsAppliedEarlierOnesAreSeenLaterOnesAreAGap() {
        #expect(EventOrder(8, after: 7) == .next)
        #expect(EventOrder(7, after: 7) == .seen)
        #expect(EventOrder(1, after: 7) == .seen)
        #expect(EventOrder(9, after: 7) == .gap)
        #expect(EventOrder(1, after: 0) == .next)
    }

    @Test func withNothingLoadedEveryEventIsAGap() {
        #expect(EventOrder(1, after: nil) == .gap)
        #expect(EventOrder(0, after: nil) == .gap)
    }

    @Test func theLargestNumbersNeitherOverflowNorWrap() {
        #expect(EventOrder(.max, after: .max - 1) == .next)
        #expect(EventOrder(.max, after: .max) == .seen)
        #expect(EventOrder(.min, after: .max) == .seen)
    }
}
