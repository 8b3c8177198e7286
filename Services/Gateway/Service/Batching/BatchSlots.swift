/// The ``AcceptanceBatcher``'s decisions as a pure value: which arrivals go at once, which wait,
/// and what each slot sends next. At most `maximumInFlight` batches are under way (the slots);
/// an item that finds a free slot takes it and goes at once, alone, so a quiet gateway adds no
/// latency; items that arrive while every slot is busy wait, in arrival order, and the next slot
/// to finish takes up to `maximumBatch` of them together. A slot is freed only when nothing waits,
/// so no waiting item is left behind by a finishing slot.
package struct BatchSlots<Item> {
    let maximumInFlight: Int
    let maximumBatch: Int
    /// Items waiting for a slot, oldest first.
    private(set) var waiting: [Item] = []
    /// Slots taken: batches under way.
    private(set) var inFlight = 0

    /// Both bounds are at least 1.
    init(maximumInFlight: Int, maximumBatch: Int) {
        self.maximumInFlight = max(1, maximumInFlight)
        self.maximumBatch = max(1, maximumBatch)
    }

    /// `item` arrived. Returns the batch to send now on a slot it took, or nil when every slot is
    /// busy (the item waits for one to finish).
    mutating func arrive(_ item: Item) -> [Item]? {
        waiting.append(item)
        guard inFlight < maximumInFlight else { return nil }
        inFlight += 1
        return take()
    }

    /// A slot's batch is done. Returns the next batch for that slot, or nil when nothing waits
    /// (the slot is freed).
    mutating func finished() -> [Item]? {
        let next = take()
        if next.isEmpty {
            inFlight -= 1
            return nil
        }
        return next
    }

    private mutating func take() -> [Item] {
        let count = min(maximumBatch, waiting.count)
        defer { waiting.removeFirst(count) }
        return Array(waiting.prefix(count))
    }
}
