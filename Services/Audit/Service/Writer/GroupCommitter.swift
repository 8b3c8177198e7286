import Bus
import Contracts
import Foundation
import Logging
import Metrics
import Postgres
import Retry
import ServiceLifecycle

/// Group commit for `audit.record`: callers queue their record and wait; `writers` tasks each
/// take whatever is queued, write it to their own chain in one transaction, and answer every
/// caller of the batch only after the commit.
///
/// A batch that fails for a transient reason (a connection lost, a serialization conflict, two
/// instances racing on a key) is run again whole — safe, because the retry finds any records
/// that did commit by their idempotency keys. Any other failure splits the batch until the
/// record at fault fails alone with a clear error. No caller is ever told "recorded" for a record
/// that did not commit.
final class GroupCommitter: Service, Sendable {
    private let queue = RecordQueue()
    private let pool: PostgresPool
    /// The chains this instance writes, one writer task each.
    private let chains: Range<Int>
    private let maximumBatch: Int
    private let signer: ReceiptSigner
    private let subjects: SubjectCache
    private let logger: Logger
    private let batchSizes = Recorder(label: "audit_batch_records")
    private let batchSeconds = Timer(label: "audit_batch_duration")

    init(pool: PostgresPool, chains: Range<Int>, maximumBatch: Int, signer: ReceiptSigner, subjects: SubjectCache, logger: Logger) {
        self.pool = pool
        self.subjects = subjects
        self.chains = chains
        self.maximumBatch = maximumBatch
        self.signer = signer
        self.logger = logger
    }

    /// Records once committed and returns the receipt, signed with its batch. Throws
    /// `unavailable` while shutting down.
    func record(_ request: AuditRecord.Request, digest: String, idempotencyHash: String) async throws -> ConsentReceipt {
        let outcome = await record([(request, digest, idempotencyHash)], signed: true)[0]
        return try outcome.get()
    }

    /// Records many at once, queued together so they commit in as few batches as the writers
    /// allow; one outcome per record, in order, each only after its batch committed. `signed`:
    /// whether the receipts are signed (with their batches) or left without a signature.
    func record(_ records: [(request: AuditRecord.Request, digest: String, idempotencyHash: String)], signed: Bool) async
        -> [Result<ConsentReceipt, BusError>]
    {
        guard !records.isEmpty else { return [] }
        return await withCheckedContinuation { continuation in
            let outcomes = OutcomeCollector(count: records.count, whenComplete: { continuation.resume(returning: $0) })
            let pending = records.enumerated().map { index, record in
                PendingRecord(request: record.request, digest: record.digest, idempotencyHash: record.idempotencyHash, signed: signed) { outcome in
                    outcomes.set(index, outcome)
                }
            }
            if !queue.enqueue(contentsOf: pending, maximumBatch: maximumBatch) {
                continuation.resume(returning: Array(repeating: .failure(BusError(.unavailable, "audit is shutting down")), count: records.count))
            }
        }
    }

    func run() async throws {
        try await pool.withConnection { db in
            try db.execute(
                "INSERT INTO audit.chains (chain) SELECT generate_series($1::int, $2::int - 1) ON CONFLICT DO NOTHING",
                self.chains.lowerBound, self.chains.upperBound)
        }
        await withGracefulShutdownHandler {
            await withDiscardingTaskGroup { group in
                for chain in chains {
                    group.addTask { await self.writeBatches(chain: chain) }
                }
            }
        } onGracefulShutdown: {
            // Writers finish what is queued, then stop; the RPC server has stopped taking requests.
            self.queue.close()
        }
    }

    private func writeBatches(chain: Int) async {
        let writer = BatchWriter(chain: chain, subjects: subjects)
        var head: ChainHead?  // as this task's last batch left it; nil when not known for sure
        while true {
            let batch = await queue.nextBatch(maximum: maximumBatch)
            if batch.isEmpty { return }
            batchSizes.record(batch.count)
            let start = ContinuousClock.now
            let outcomes = signed(await commit(batch, with: writer, head: &head), of: batch)
            let elapsed = ContinuousClock.now - start
            batchSeconds.recordNanoseconds(Int64(elapsed.inSeconds * 1e9))
            logger.debug("audit batch done", metadata: ["chain": "\(chain)", "records": "\(batch.count)", "ms": "\(elapsed.inMilliseconds)"])
            for (record, outcome) in zip(batch, outcomes) { record.reply(outcome) }
        }
    }

    /// The committed receipts whose callers want them signed, signed together: one signature for
    /// the batch, whatever its size.
    private func signed(_ outcomes: [Result<ConsentReceipt, BusError>], of batch: [PendingRecord]) -> [Result<ConsentReceipt, BusError>] {
        var indices: [Int] = []
        var unsigned: [ConsentReceipt] = []
        for (index, outcome) in outcomes.enumerated() where batch[index].signed {
            if case .success(let receipt) = outcome {
                indices.append(index)
                unsigned.append(receipt)
            }
        }
        var outcomes = outcomes
        for (index, receipt) in zip(indices, signer.signedTogether(unsigned)) { outcomes[index] = .success(receipt) }
        return outcomes
    }

    /// One outcome per record. A batch goes first without looking for earlier uses of its keys;
    /// if the keys' unique index refuses it, it runs again at once with the look-up (a retried
    /// record gets its original receipt). Transient failures retry the whole batch; any other
    /// failure splits the batch in halves and tries each, so one bad record fails alone and its
    /// neighbours, which did nothing wrong, still commit.
    ///
    /// `head` is the chain's head as the last commit left it, or nil: any failure forgets it (a
    /// commit whose outcome is unknown may or may not have moved it), so the next try reads it.
    private func commit(_ batch: [PendingRecord], with writer: BatchWriter, head: inout ChainHead?, findingRepeats: Bool = false) async
        -> [Result<ConsentReceipt, BusError>]
    {
        var attempt = 0
        var findingRepeats = findingRepeats
        while true {
            attempt += 1
            do {
                let written = try await pool.withConnection { [findingRepeats, head] db in
                    try writer.write(batch, at: Date(), findingRepeats: findingRepeats, head: head, on: db)
                }
                head = written.head
                return written.receipts.map { .success($0) }
            } catch let error as PostgresError where error.isUniqueViolation && !findingRepeats {
                head = nil
                findingRepeats = true  // a key used before (a retry): look the repeats up, not counted as an attempt
                attempt -= 1
                logger.debug(
                    "audit batch repeats a key; writing it again with its earlier receipts",
                    metadata: ["chain": "\(writer.chain)", "error": "\(error)"])
            } catch {
                head = nil
                let retryable = Self.isTransient(error) && attempt < 4
                logger.log(
                    level: retryable || batch.count > 1 ? .notice : .error, "audit batch failed",
                    metadata: ["chain": "\(writer.chain)", "records": "\(batch.count)", "attempt": "\(attempt)", "error": "\(error)"])
                if retryable {
                    try? await Task.sleep(for: Self.retryBackoff.delay(after: attempt))
                    continue
                }
                guard batch.count > 1 else { return [.failure(Self.busError(error))] }
                let half = batch.count / 2
                let first = await commit(Array(batch[..<half]), with: writer, head: &head, findingRepeats: findingRepeats)
                return first + (await commit(Array(batch[half...]), with: writer, head: &head, findingRepeats: findingRepeats))
            }
        }
    }

    /// Between tries of a batch that lost a race: 20, 40, 60 ms (three retries).
    static let retryBackoff = Backoff(first: .milliseconds(20), maximum: .milliseconds(60), growth: .linear)

    static func isTransient(_ error: any Error) -> Bool {
        if error is BatchWriter.SubjectRace { return true }
        guard let error = error as? PostgresError else { return false }
        return error.isConnectionFailure || error.isSerializationFailure || error.isUniqueViolation
    }

    static func busError(_ error: any Error) -> BusError {
        if error is BatchWriter.SubjectRace { return BusError(.unavailable, "concurrent writes conflicted; try again") }
        return BusError(converting: error, internalMessage: "the record could not be written")
    }
}
