import Foundation
import Testing

@testable import Bus

/// The client's table of calls waiting for replies, without sockets: every way out of the table
/// resumes a call exactly once, with the right outcome.
@Suite struct PendingCallsTests {
    /// Starts a call waiting in `pending` and returns its task once the call is in the table.
    static func waiting(
        _ pending: PendingCalls, _ id: UUID, type: String = "test.call", expiresAt: ContinuousClock.Instant = .now + .seconds(60),
        retriedUntil: ContinuousClock.Instant? = nil
    ) async -> Task<PendingCalls.Reply, any Error> {
        let before = pending.count
        let task = Task {
            try await withUnsafeThrowingContinuation { continuation in
                _ = pending.add(id, type: type, expiresAt: expiresAt, retriedUntil: retriedUntil, continuation)
            }
        }
        while pending.count == before { await Task.yield() }
        return task
    }

    static func reply(to id: UUID, _ text: String) -> PendingCalls.Reply {
        (Envelope(kind: .reply, type: "test.call", correlationId: id, payload: Data(text.utf8)), [])
    }

    @Test("a batch of replies resumes each waiting call with its own reply and counts the late ones")
    func completeBatch() async throws {
        let pending = PendingCalls()
        let a = UUID()
        let b = UUID()
        let stranger = UUID()
        let callA = await Self.waiting(pending, a)
        let callB = await Self.waiting(pending, b)
        var batch = ReplyBatch()
        batch.append(b, Self.reply(to: b, "for b"))
        batch.append(stranger, Self.reply(to: stranger, "nobody waits"))
        batch.append(a, Self.reply(to: a, "for a"))
        #expect(pending.complete(&batch) == 1)
        #expect(batch.isEmpty)
        #expect(try await callA.value.envelope.payload == Data("for a".utf8))
        #expect(try await callB.value.envelope.payload == Data("for b".utf8))
        #expect(pending.count == 0)
    }

    @Test("a second reply to the same call is late, not a second resume")
    func duplicateReply() async throws {
        let pending = PendingCalls()
        let id = UUID()
        let call = await Self.waiting(pending, id)
        var batch = ReplyBatch()
        batch.append(id, Self.reply(to: id, "first"))
        batch.append(id, Self.reply(to: id, "second"))
        #expect(pending.complete(&batch) == 1)
        #expect(try await call.value.envelope.payload == Data("first".utf8))
    }

    @Test("expiry fails only the calls past their instant, with deadline_exceeded naming the call")
    func expiry() async throws {
        let pending = PendingCalls()
        let now = ContinuousClock.now
        let due = await Self.waiting(pending, UUID(), type: "legal.current", expiresAt: now - .milliseconds(1))
        let later = UUID()
        let notDue = await Self.waiting(pending, later, expiresAt: now + .seconds(30))
        let next = pending.expire(now: now, server: "legal")
        #expect(next == .seconds(30))
        let error = await #expect(throws: BusError.self) { try await due.value }
        #expect(error?.code == .deadlineExceeded)
        #expect(error?.message.contains("legal.current") == true)
        #expect(pending.count == 1)
        // Nothing is due before the earliest instant: the sweep says how long to sleep.
        #expect(pending.expire(now: now + .seconds(10), server: "legal") == .seconds(20))
        var batch = ReplyBatch()
        batch.append(later, Self.reply(to: later, "in time"))
        #expect(pending.complete(&batch) == 0)
        #expect(try await notDue.value.envelope.payload == Data("in time".utf8))
        #expect(pending.expire(now: now + .seconds(60), server: "legal") == nil)
    }

    @Test("a failed call and a closed client resume every call once with the error")
    func failures() async {
        let pending = PendingCalls()
        let single = UUID()
        let failed = await Self.waiting(pending, single)
        let others = [await Self.waiting(pending, UUID()), await Self.waiting(pending, UUID())]
        pending.fail(single, with: BusError(.unavailable, "send failed"))
        pending.fail(single, with: BusError(.internal, "a second failure finds nothing"))
        let error = await #expect(throws: BusError.self) { try await failed.value }
        #expect(error?.code == .unavailable)
        pending.failAll(with: BusError(.unavailable, "client closed"))
        for call in others {
            let error = await #expect(throws: BusError.self) { try await call.value }
            #expect(error?.message == "client closed")
        }
        #expect(pending.count == 0)
        #expect(pending.expire(now: .now, server: "x") == nil)
    }

    @Test("a reply between two attempts of a retried call answers the next attempt, which sends nothing")
    func replyBetweenAttempts() async throws {
        let pending = PendingCalls()
        let now = ContinuousClock.now
        let id = UUID()
        // The first attempt expires; its call will be sent again until `now + 60 s`.
        let first = await Self.waiting(pending, id, expiresAt: now - .milliseconds(1), retriedUntil: now + .seconds(60))
        _ = pending.expire(now: now, server: "legal")
        await #expect(throws: BusError.self) { try await first.value }
        // Its reply arrives before the next attempt is registered: kept, not late.
        var batch = ReplyBatch()
        batch.append(id, Self.reply(to: id, "from the first run"))
        #expect(pending.complete(&batch) == 0)
        // The next attempt is answered at once, and told so (its caller sends nothing).
        let answered = try await withUnsafeThrowingContinuation { continuation in
            #expect(pending.add(id, type: "test.call", expiresAt: now + .seconds(1), retriedUntil: now + .seconds(60), continuation))
        }
        #expect(answered.envelope.payload == Data("from the first run".utf8))
        #expect(pending.count == 0)
        // Nothing is kept for a call that is not retried, or past its own deadline.
        let once = UUID()
        let single = await Self.waiting(pending, once, expiresAt: now - .milliseconds(1))
        let late = UUID()
        let lastAttempt = await Self.waiting(pending, late, expiresAt: now - .milliseconds(1), retriedUntil: now)
        _ = pending.expire(now: now, server: "legal")
        await #expect(throws: BusError.self) { try await single.value }
        await #expect(throws: BusError.self) { try await lastAttempt.value }
        batch.append(once, Self.reply(to: once, "late"))
        batch.append(late, Self.reply(to: late, "late too"))
        #expect(pending.complete(&batch) == 2)
        // A call that gives up between attempts leaves nothing behind.
        let gaveUp = UUID()
        let abandoned = await Self.waiting(pending, gaveUp, expiresAt: now - .milliseconds(1), retriedUntil: now + .seconds(60))
        _ = pending.expire(now: now, server: "legal")
        await #expect(throws: BusError.self) { try await abandoned.value }
        pending.forget(gaveUp)
        batch.append(gaveUp, Self.reply(to: gaveUp, "nobody"))
        #expect(pending.complete(&batch) == 1)
    }
}
