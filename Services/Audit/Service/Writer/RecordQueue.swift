import Bus
import Contracts
import Foundation
import Locks

/// A record waiting for its batch, with the caller waiting for its receipt.
struct PendingRecord: Sendable {
    let request: AuditRecord.Request
    /// The document's digest, from the catalog.
    let digest: String
    /// SHA-256 of the user id and the caller's idempotency key: de-duplicates per user.
    let idempotencyHash: String
    /// Whether the caller wants its receipt signed (a service that keeps no receipt does not).
    var signed = true
    /// The record's id and time when they were given before it reached Audit (an act from
    /// Accounts' consent stream); nil: made when it is chained.
    var recordId: UUID? = nil
    var recordedMilliseconds: Int64? = nil
    /// Called once with the record's outcome, after its batch committed (or failed).
    let reply: @Sendable (Result<ConsentReceipt, BusError>) -> Void
}

/// Where concurrent `audit.record` calls meet the batch writers. Writers take everything waiting
/// (up to a batch's limit) each time they are free: under load, records that arrive while a batch
/// commits form the next batch — group commit with no timer and no added latency when idle.
final class RecordQueue: Sendable {
    private struct State {
        var waiting: [PendingRecord] = []
        var idleWriters: [CheckedContinuation<Void, Never>] = []
        var closed = false
    }
    private let state = LockedValue(State())

    /// Queues records (all of them, in order, so a batch call's records meet in one batch when
    /// they fit); false once the queue is closed (shutting down), and then none is queued.
    func enqueue(contentsOf records: [PendingRecord], maximumBatch: Int) -> Bool {
        let writers = state.withLock { state -> [CheckedContinuation<Void, Never>]? in
            guard !state.closed else { return nil }
            state.waiting.append(contentsOf: records)
            // One free writer per batch's worth of records waiting.
            let wanted = min(state.idleWriters.count, (state.waiting.count + maximumBatch - 1) / maximumBatch)
            defer { state.idleWriters.removeLast(wanted) }
            return Array(state.idleWriters.suffix(wanted))
        }
        guard let writers else { return false }
        for writer in writers { writer.resume() }
        return true
    }

    /// The next batch, waiting while there is none; empty once closed and drained.
    func nextBatch(maximum: Int) async -> [PendingRecord] {
        while true {
            let batch = state.withLock { state -> [PendingRecord]? in
                guard !state.waiting.isEmpty else { return state.closed ? [] : nil }
                let count = min(maximum, state.waiting.count)
                let batch = Array(state.waiting.prefix(count))
                state.waiting.removeFirst(count)
                return batch
            }
            if let batch { return batch }
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let ready = state.withLock { state -> Bool in
                    if !state.waiting.isEmpty || state.closed { return true }
                    state.idleWriters.append(continuation)
                    return false
                }
                if ready { continuation.resume() }
            }
        }
    }

    /// Writers waiting for records (for tests).
    var idleWriterCount: Int { state.withLock { $0.idleWriters.count } }

    /// Refuses new records and wakes every writer so it drains what is left and stops.
    func close() {
        let writers = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            state.closed = true
            defer { state.idleWriters.removeAll() }
            return state.idleWriters
        }
        for writer in writers { writer.resume() }
    }
}
