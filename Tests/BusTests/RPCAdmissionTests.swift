import Foundation
import Testing

@testable import Bus
@testable import BusCore

/// The server's decisions about each request (``RPCAdmission``) without sockets or clocks: methods
/// are names, routes are one byte, time is moved by hand.
@Suite("RPC admission")
struct RPCAdmissionTests {
    typealias Admission = RPCAdmission<String>

    let start = ContinuousClock.now
    /// The wall clock deadlines are read against.
    let date = Date(timeIntervalSince1970: 1_800_000_000)
    let ok = IdempotencyCache.Outcome(payload: Array("{\"ok\":true}".utf8), attachments: [], error: nil)

    func admission(maxInFlight: Int = 8) -> Admission {
        Admission(name: "test", maxInFlight: maxInFlight, idempotency: .init(entries: 100, bytes: 1 << 20, age: .seconds(60)))
    }

    /// A request to the method `method` (`nil`: none registered). With `key`, the method keeps its
    /// replies unless `keepsReplies` is false; `digest` stands for the body's.
    func arrival(
        _ id: UUID, route: UInt8 = 1, payload: String = "{}", principal: Principal? = .user("u"), peer: String? = "gateway",
        method: String? = "write", key: String? = nil, keepsReplies: Bool = true, digest: Int = 7, deadline: Date? = nil,
        version: Int = Envelope.protocolVersion, kind: Envelope.Kind = .request
    ) -> Admission.Arrival {
        let envelope = Envelope(
            v: version, id: id, kind: kind, type: "t.write", deadline: deadline, principal: principal, idempotencyKey: key,
            payload: Data(payload.utf8))
        let idempotency = key.flatMap { key in
            keepsReplies ? Admission.Idempotency(key: .init(type: "t.write", principal: principal, key: key), digest: digest) : nil
        }
        return .init(envelope: envelope, route: [Data([route])], peer: peer, attachments: [], method: method, idempotency: idempotency)
    }

    /// The action's case, to compare in one expectation.
    static func kind(_ action: Admission.Action) -> String {
        switch action {
        case .reject: "reject"
        case .joinRun: "joinRun"
        case .joinKey: "joinKey"
        case .replay: "replay"
        case .refuseReusedKey: "refuseReusedKey"
        case .run: "run"
        }
    }

    static func run(_ action: Admission.Action) -> Admission.Run? {
        if case .run(let run) = action { return run }
        return nil
    }

    static func rejection(_ action: Admission.Action) -> (error: BusError, countedAs: String?)? {
        if case .reject(let error, let countedAs) = action { return (error, countedAs) }
        return nil
    }

    /// Who a completion answers besides the run's own sender, as (route byte, request id).
    static func answered(_ waiters: [IdempotencyCache.Waiter]) -> [String] {
        waiters.map { "\($0.route.first?.first ?? 0)/\($0.requestId)" }
    }

    @Test("a retry under the running id joins the run, is answered with its outcome, and the id is free after")
    func retryJoinsTheRunningId() throws {
        var admission = admission()
        let id = UUID()
        let run = try #require(Self.run(admission.admit(arrival(id), now: start, date: date)))
        #expect(run.id == id && run.method == "write" && run.key == nil)
        let retry = admission.admit(arrival(id, route: 2), now: start, date: date)
        #expect(Self.kind(retry) == "joinRun")
        let retryAgain = admission.admit(arrival(id, route: 2), now: start, date: date)
        #expect(Self.kind(retryAgain) == "joinRun")
        let ownRetry = admission.admit(arrival(id), now: start, date: date)
        #expect(Self.kind(ownRetry) == "joinRun", "the first sender's own retry")
        #expect(admission.inFlight == 1, "joined retries take no place")
        let others = admission.complete(run, ok, now: start)
        #expect(Self.answered(others) == ["2/\(id)"], "one copy to the other sender; the first gets the run's own reply")
        let idle = admission.answered()
        #expect(idle)
        #expect(admission.inFlight == 0)
        let afterReply = admission.admit(arrival(id), now: start, date: date)
        #expect(Self.kind(afterReply) == "run", "a retry after the reply runs again")
    }

    @Test("another request under a running id is refused and does not join")
    func anotherRequestUnderARunningIdIsRefused() throws {
        var admission = admission()
        let id = UUID()
        let run = try #require(Self.run(admission.admit(arrival(id), now: start, date: date)))
        let others = [
            arrival(id, route: 2, payload: "{\"a\":1}"), arrival(id, route: 3, principal: .user("v")),
            arrival(id, route: 4, peer: "documents"),
        ]
        for other in others {
            let refusal = try #require(Self.rejection(admission.admit(other, now: start, date: date)))
            #expect(refusal.error.code == .invalidArgument)
            #expect(refusal.error.message.contains("another request with this id is running"))
            #expect(refusal.countedAs == "request_id_in_use")
        }
        #expect(admission.inFlight == 1)
        let answeredToo = admission.complete(run, ok, now: start)
        #expect(answeredToo.isEmpty, "no refused request is answered with the run's reply")
    }

    @Test("a retry under the same key joins the run, then is answered from the kept outcome until it expires")
    func retryUnderTheSameKeyJoinsThenReplays() throws {
        var admission = admission()
        let first = UUID()
        let second = UUID()
        let run = try #require(Self.run(admission.admit(arrival(first, key: "k"), now: start, date: date)))
        #expect(run.key?.key == "k")
        let keyRetry = admission.admit(arrival(second, route: 2, key: "k"), now: start, date: date)
        #expect(Self.kind(keyRetry) == "joinKey")
        #expect(admission.inFlight == 1)
        let answeredToo = admission.complete(run, ok, now: start)
        #expect(Self.answered(answeredToo) == ["2/\(second)"], "answered under its own id")
        let idle = admission.answered()
        #expect(idle)

        guard case .replay(let kept) = admission.admit(arrival(UUID(), route: 3, key: "k"), now: start + .seconds(59), date: date) else {
            Issue.record("a retry within the window is answered from the kept outcome")
            return
        }
        #expect(kept.payload == ok.payload)
        #expect(admission.inFlight == 1, "a replay holds its place until it is sent")
        let replayed = admission.answered()
        #expect(replayed)
        let again = admission.admit(arrival(UUID(), key: "k"), now: start + .seconds(61), date: date)
        #expect(Self.run(again)?.key?.key == "k", "an expired outcome runs again")
    }

    @Test("a key reused for another request is refused while it runs and once it is done")
    func reusedKeyIsRefused() throws {
        var admission = admission()
        let run = try #require(Self.run(admission.admit(arrival(UUID(), key: "k"), now: start, date: date)))
        let reusedId = UUID()
        guard case .refuseReusedKey(let error) = admission.admit(arrival(reusedId, route: 2, key: "k", digest: 8), now: start, date: date)
        else {
            Issue.record("another body under a running key")
            return
        }
        #expect(error.code == .idempotencyKeyReused)
        #expect(admission.inFlight == 2, "the refusal holds its place until it is sent")
        let idle = admission.answered()
        #expect(!idle)
        let refusedIdAgain = admission.admit(arrival(reusedId, key: "other"), now: start, date: date)
        #expect(Self.kind(refusedIdAgain) == "run", "the refused id is free")
        let answeredToo = admission.complete(run, ok, now: start)
        #expect(answeredToo.isEmpty, "the refused sender did not join")
        let reusedOnceDone = admission.admit(arrival(UUID(), key: "k", digest: 8), now: start, date: date)
        #expect(Self.kind(reusedOnceDone) == "refuseReusedKey")
        let sameBody = admission.admit(arrival(UUID(), key: "k"), now: start, date: date)
        #expect(Self.kind(sameBody) == "replay", "the same body still replays")
    }

    @Test("a transient failure is not kept: the next retry under its key runs")
    func transientFailuresRunAgain() throws {
        var admission = admission()
        let run = try #require(Self.run(admission.admit(arrival(UUID(), key: "t"), now: start, date: date)))
        let failed = IdempotencyCache.Outcome(payload: nil, attachments: [], error: BusError(.unavailable, "read-only"))
        _ = admission.complete(run, failed, now: start)
        let idle = admission.answered()
        #expect(idle)
        let retry = admission.admit(arrival(UUID(), key: "t"), now: start, date: date)
        #expect(Self.kind(retry) == "run")
    }

    @Test("a method that keeps no replies runs a retry under a new id again, key or not")
    func methodsWithoutKeptRepliesRunEachId() throws {
        var admission = admission()
        let run = try #require(Self.run(admission.admit(arrival(UUID(), key: "k", keepsReplies: false), now: start, date: date)))
        #expect(run.key == nil)
        let retry = admission.admit(arrival(UUID(), key: "k", keepsReplies: false), now: start, date: date)
        #expect(Self.kind(retry) == "run")
        #expect(admission.inFlight == 2)
    }

    @Test("at capacity new requests and replays are refused; retries of running ones still join")
    func capacity() throws {
        var admission = admission(maxInFlight: 2)
        let done = try #require(Self.run(admission.admit(arrival(UUID(), key: "k"), now: start, date: date)))
        _ = admission.complete(done, ok, now: start)
        let idle = admission.answered()
        #expect(idle)
        let first = UUID()
        let firstRun = admission.admit(arrival(first), now: start, date: date)
        #expect(Self.kind(firstRun) == "run")
        let secondRun = admission.admit(arrival(UUID()), now: start, date: date)
        #expect(Self.kind(secondRun) == "run")
        let refused = UUID()
        let refusal = try #require(Self.rejection(admission.admit(arrival(refused), now: start, date: date)))
        #expect(refusal.error == BusError(.unavailable, "test is at capacity"))
        #expect(refusal.countedAs == nil, "the server's load, not the request's fault")
        let replay = admission.admit(arrival(UUID(), key: "k"), now: start, date: date)
        #expect(Self.kind(replay) == "reject", "a replay takes a place too")
        let retryOfFirst = admission.admit(arrival(first, route: 2), now: start, date: date)
        #expect(Self.kind(retryOfFirst) == "joinRun")
        #expect(admission.inFlight == 2)
        let idleAtCapacity = admission.answered()
        #expect(!idleAtCapacity)
        let refusedIdAgain = admission.admit(arrival(refused), now: start, date: date)
        #expect(Self.kind(refusedIdAgain) == "run", "a refused id was not left running")
    }

    @Test("draining refuses every request, retries included, and says when the last reply is sent")
    func draining() throws {
        var admission = admission()
        let id = UUID()
        let run = try #require(Self.run(admission.admit(arrival(id), now: start, date: date)))
        let idle = admission.drain()
        #expect(!idle, "one is running")
        for late in [arrival(UUID()), arrival(id, route: 2)] {
            let refusal = try #require(Self.rejection(admission.admit(late, now: start, date: date)))
            #expect(refusal.error == BusError(.unavailable, "test is shutting down"))
            #expect(refusal.countedAs == nil)
        }
        let answeredToo = admission.complete(run, ok, now: start)
        #expect(answeredToo.isEmpty, "the refused retry did not join")
        let drained = admission.answered()
        #expect(drained, "the last reply is sent: the shutdown may close the socket")
        var unused = self.admission()
        let drainedAtOnce = unused.drain()
        #expect(drainedAtOnce, "nothing was running")
    }

    @Test("an envelope that cannot be served is rejected before anything is admitted")
    func invalidEnvelopes() throws {
        var admission = admission()
        let tooLong = String(repeating: "k", count: IdempotencyKeyRule.busKeyMaximumBytes + 1)
        let cases: [(Admission.Arrival, ErrorCode, String)] = [
            (arrival(UUID(), version: Envelope.protocolVersion + 1), .invalidArgument, "protocol version"),
            (arrival(UUID(), kind: .reply), .invalidArgument, "expected a request, got reply"),
            (arrival(UUID(), key: ""), .invalidArgument, "idempotency key must be"),
            (arrival(UUID(), key: tooLong), .invalidArgument, "idempotency key must be"),
            (arrival(UUID(), deadline: date - 0.001), .deadlineExceeded, "after its deadline"),
            (arrival(UUID(), method: nil, deadline: date - 1), .deadlineExceeded, "after its deadline"),
            (arrival(UUID(), method: nil), .invalidArgument, "unknown message type t.write for test"),
        ]
        for (request, code, message) in cases {
            let refusal = try #require(Self.rejection(admission.admit(request, now: start, date: date)))
            #expect(refusal.error.code == code)
            #expect(refusal.error.message.contains(message), "\(refusal.error.message)")
            #expect(refusal.countedAs == (request.method == nil && code == .invalidArgument ? "unknown_type" : code.rawValue))
            let action30 = admission.admit(arrival(request.envelope.id), now: start, date: date)
            #expect(Self.kind(action30) == "run", "its id was not taken")
        }
        let action31 = admission.admit(arrival(UUID(), deadline: date + 1), now: start, date: date)
        #expect(Self.kind(action31) == "run")
        #expect(admission.inFlight == cases.count + 1)
    }
}
