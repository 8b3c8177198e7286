import Testing

@testable import GatewayService

/// The acceptance batcher's slots (``BatchSlots``) with plain values: items are numbers.
@Suite struct BatchSlotsTests {
    @Test func anArrivalWithAFreeSlotGoesAtOnceAlone() {
        var slots = BatchSlots<Int>(maximumInFlight: 2, maximumBatch: 10)
        #expect(slots.arrive(1) == [1])
        #expect(slots.arrive(2) == [2])
        #expect(slots.inFlight == 2 && slots.waiting.isEmpty)
    }

    @Test func arrivalsWhileEverySlotIsBusyWaitAndGoTogetherInOrderWhenOneFinishes() {
        var slots = BatchSlots<Int>(maximumInFlight: 1, maximumBatch: 10)
        #expect(slots.arrive(1) == [1])
        #expect(slots.arrive(2) == nil)
        #expect(slots.arrive(3) == nil)
        #expect(slots.arrive(4) == nil)
        #expect(slots.waiting == [2, 3, 4])
        // The finishing slot takes the waiting ones; it stays taken.
        #expect(slots.finished() == [2, 3, 4])
        #expect(slots.inFlight == 1 && slots.waiting.isEmpty)
        // Nothing waits: the slot is freed, and the next arrival takes it.
        #expect(slots.finished() == nil)
        #expect(slots.inFlight == 0)
        #expect(slots.arrive(5) == [5])
    }

    @Test func aBatchHoldsAtMostTheMaximumAndTheRestWaitForTheNext() {
        var slots = BatchSlots<Int>(maximumInFlight: 1, maximumBatch: 3)
        #expect(slots.arrive(0) == [0])
        for item in 1...7 { #expect(slots.arrive(item) == nil) }
        #expect(slots.finished() == [1, 2, 3])
        #expect(slots.finished() == [4, 5, 6])
        #expect(slots.finished() == [7])
        #expect(slots.finished() == nil)
        #expect(slots.inFlight == 0)
    }

    @Test func boundsBelowOneAreOne() {
        var slots = BatchSlots<Int>(maximumInFlight: 0, maximumBatch: -3)
        #expect(slots.maximumInFlight == 1 && slots.maximumBatch == 1)
        #expect(slots.arrive(1) == [1])
        #expect(slots.arrive(2) == nil)
        #expect(slots.arrive(3) == nil)
        #expect(slots.finished() == [2])
    }
}
