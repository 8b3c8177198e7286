import Bus
import Contracts
import Locks

/// Gathers the outcomes of a batch call's records, which their batches answer one by one and in
/// any order, and hands the whole list on once the last one is in.
final class OutcomeCollector: Sendable {
    private struct State {
        var outcomes: [Result<ConsentReceipt, BusError>?]
        var missing: Int
    }
    private let state: LockedValue<State>
    private let whenComplete: @Sendable ([Result<ConsentReceipt, BusError>]) -> Void

    init(count: Int, whenComplete: @escaping @Sendable ([Result<ConsentReceipt, BusError>]) -> Void) {
        state = LockedValue(State(outcomes: Array(repeating: nil, count: count), missing: count))
        self.whenComplete = whenComplete
    }

    /// Records the outcome of record `index`; the first outcome of an index counts.
    func set(_ index: Int, _ outcome: Result<ConsentReceipt, BusError>) {
        let complete = state.withLock { state -> [Result<ConsentReceipt, BusError>]? in
            guard state.outcomes[index] == nil else { return nil }
            state.outcomes[index] = outcome
            state.missing -= 1
            return state.missing == 0 ? state.outcomes.map { $0! } : nil
        }
        if let complete { whenComplete(complete) }
    }
}
