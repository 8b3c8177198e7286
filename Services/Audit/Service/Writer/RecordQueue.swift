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
    let reply: CheckedContinuation<ConsentReceipt, any Error>
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

    /// Queues a record; false once the queue is closed (shutting down).
    func enqueue(_ record: PendingRecord) -> Bool {
        let writer = state.withLock { state -> CheckedContinuation<Void, Never>?? in
            guard !state.closed else { return .none }
            state.waiting.append(record)
            return .some(state.idleWriters.popLast())
        }
        guard let writer else { return false }
        writer?.resume()
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
