import Contracts
import Foundation
import Testing

@testable import AuditService

/// Where `audit.record` calls meet the batch writers, without a database: batches form from what
/// waits, in order, up to the limit; idle writers are woken one per batch's worth; closing drains.
@Suite struct RecordQueueTests {
    static func record(_ number: Int) -> PendingRecord {
        PendingRecord(
            request: .init(userId: UUID(), documentType: .termsOfService, version: "v\(number)", action: .accept),
            digest: "digest", idempotencyHash: "key-\(number)", reply: { _ in })
    }

    /// Waits until `count` writers wait for records.
    static func untilIdle(_ queue: RecordQueue, _ count: Int) async {
        while queue.idleWriterCount < count { await Task.yield() }
    }

    static func numbers(_ batch: [PendingRecord]) -> [String] { batch.map(\.idempotencyHash) }

    @Test("a free writer takes everything waiting, in order, up to the batch limit")
    func batchesInOrder() async {
        let queue = RecordQueue()
        #expect(queue.enqueue(contentsOf: (1...5).map(Self.record), maximumBatch: 3))
        #expect(Self.numbers(await queue.nextBatch(maximum: 3)) == ["key-1", "key-2", "key-3"])
        #expect(Self.numbers(await queue.nextBatch(maximum: 3)) == ["key-4", "key-5"])
    }

    @Test("a waiting writer is woken by the next record")
    func wakesAWaitingWriter() async {
        let queue = RecordQueue()
        let writer = Task { await queue.nextBatch(maximum: 10) }
        await Self.untilIdle(queue, 1)
        #expect(queue.enqueue(contentsOf: [Self.record(1)], maximumBatch: 10))
        #expect(Self.numbers(await writer.value) == ["key-1"])
    }

    @Test("one idle writer is woken per batch's worth of records, and together they take them all")
    func wakesOneWriterPerBatch() async {
        let queue = RecordQueue()
        let writers = (0..<3).map { _ in Task { await queue.nextBatch(maximum: 2) } }
        await Self.untilIdle(queue, 3)
        #expect(queue.enqueue(contentsOf: (1...4).map(Self.record), maximumBatch: 2))
        // Four records, batches of two: two writers are woken; the third waits on.
        #expect(queue.idleWriterCount == 1)
        #expect(queue.enqueue(contentsOf: [Self.record(5)], maximumBatch: 2))
        var batches: [[String]] = []
        for writer in writers { batches.append(Self.numbers(await writer.value)) }
        #expect(batches.map(\.count).sorted() == [1, 2, 2])
        #expect(batches.flatMap { $0 }.sorted() == ["key-1", "key-2", "key-3", "key-4", "key-5"])
    }

    @Test("a batch call's records stay together when they fit")
    func callStaysTogether() async {
        let queue = RecordQueue()
        #expect(queue.enqueue(contentsOf: [Self.record(1)], maximumBatch: 10))
        #expect(queue.enqueue(contentsOf: (2...4).map(Self.record), maximumBatch: 10))
        #expect(Self.numbers(await queue.nextBatch(maximum: 10)) == ["key-1", "key-2", "key-3", "key-4"])
    }

    @Test("closing refuses new records, lets writers drain what waits, then gives them empty batches")
    func closeDrains() async {
        let queue = RecordQueue()
        let idle = Task { await queue.nextBatch(maximum: 10) }
        await Self.untilIdle(queue, 1)
        #expect(queue.enqueue(contentsOf: [Self.record(1)], maximumBatch: 10))
        #expect(Self.numbers(await idle.value) == ["key-1"])
        #expect(queue.enqueue(contentsOf: [Self.record(2)], maximumBatch: 10))
        let waiting = Task { () -> [PendingRecord] in
            _ = await queue.nextBatch(maximum: 10)  // record 2
            return await queue.nextBatch(maximum: 10)  // waits until closed
        }
        await Self.untilIdle(queue, 1)
        queue.close()
        #expect(await waiting.value.isEmpty)
        #expect(!queue.enqueue(contentsOf: [Self.record(3)], maximumBatch: 10))
        #expect(await queue.nextBatch(maximum: 10).isEmpty)
    }
}
