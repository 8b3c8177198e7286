import Bus
import Contracts
import Foundation
import Locks
import Metrics

/// Gathers the acceptances that arrive together into `accounts.accept_terms_batch` calls: group
/// commit across the bus. A request that finds a free slot (fewer than `maximumInFlight` batches
/// under way) goes at once, alone, so a quiet gateway adds no latency; requests that arrive while
/// every slot is busy wait for the next free one and go together. No timer ever holds a request.
/// Those decisions are ``BatchSlots`` (pure, under one lock); this class sends and answers.
///
/// Each request keeps its own idempotency key (the client's `Idempotency-Key`, or a fresh one), so
/// a batch retried by the bus client records every acceptance once, and its own answer: one bad
/// item fails alone.
package final class AcceptanceBatcher: Sendable {
    private struct Waiting {
        let item: AccountsAcceptTermsBatch.Item
        let reply: CheckedContinuation<AccountUser, any Error>
    }

    private let services: ServiceClients
    private let slots: LockedValue<BatchSlots<Waiting>>
    /// Acceptances per batch call: how much the batching saves, for operators and benchmarks.
    private let batchSizes = Recorder(label: "gateway_accept_batch_items")

    init(services: ServiceClients, maximumInFlight: Int, maximumBatch: Int = AccountsAcceptTermsBatch.maximumItems) {
        self.services = services
        self.slots = LockedValue(
            BatchSlots(maximumInFlight: maximumInFlight, maximumBatch: min(maximumBatch, AccountsAcceptTermsBatch.maximumItems)))
    }

    /// Accepts the terms for `item`'s user once its batch has committed. `traceparent` is that of
    /// the request when it starts a batch (a batch carries one trace context: its first request's).
    package func accept(_ item: AccountsAcceptTermsBatch.Item, traceparent: String) async throws -> AccountUser {
        try await withCheckedThrowingContinuation { continuation in
            if let batch = slots.withLock({ $0.arrive(Waiting(item: item, reply: continuation)) }) {
                Task { await self.run(batch, traceparent: traceparent) }
            }
        }
    }

    /// Sends `batch`, then whatever gathered meanwhile, until nothing waits; then frees the slot.
    private func run(_ first: [Waiting], traceparent: String) async {
        var batch: [Waiting]? = first
        while let next = batch {
            await send(next, traceparent: traceparent)
            batch = slots.withLock { $0.finished() }
        }
    }

    private func send(_ batch: [Waiting], traceparent: String) async {
        batchSizes.record(batch.count)
        do {
            let reply = try await services.call(
                .accounts, AccountsAcceptTermsBatch.self, .init(items: batch.map(\.item)), principal: .service("gateway"),
                traceparent: traceparent)
            guard reply.outcomes.count == batch.count else {
                throw BusError(.internal, "accounts answered \(reply.outcomes.count) of \(batch.count) acceptances")
            }
            for (waiting, outcome) in zip(batch, reply.outcomes) {
                do { waiting.reply.resume(returning: try outcome.get()) } catch { waiting.reply.resume(throwing: error) }
            }
        } catch {
            for waiting in batch { waiting.reply.resume(throwing: error) }
        }
    }
}
