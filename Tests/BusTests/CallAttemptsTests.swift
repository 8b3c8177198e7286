import Retry
import Testing

@testable import Bus
@testable import BusCore

/// The client's decisions across a call's attempts (``CallAttempts``), with plain values: a reply
/// is a string, time is moved by hand.
@Suite struct CallAttemptsTests {
    let start = ContinuousClock.now
    let backoff = Backoff(first: .milliseconds(20), maximum: .milliseconds(200), growth: .linear)

    func attempts(retry: Bool = true, deadline: Duration = .seconds(5), attempt: Duration = .seconds(1)) -> CallAttempts<String> {
        CallAttempts(retry: retry, started: start, overall: start + deadline, attemptTimeout: attempt, backoff: backoff)
    }

    @Test func eachAttemptGetsItsOwnTimeWithinTheDeadline() {
        var call = attempts(deadline: .milliseconds(2500))
        #expect(call.begin(now: start) == start + .seconds(1))
        #expect(call.begin(now: start + .seconds(1)) == start + .seconds(2))
        // The third would run past the deadline: it ends with it.
        #expect(call.begin(now: start + .seconds(2)) == start + .milliseconds(2500))
        #expect(call.attempt == 3)
    }

    @Test func aCallThatMayNotBeRetriedHasOneAttemptWithTheWholeDeadline() {
        var call = attempts(retry: false)
        #expect(call.begin(now: start) == start + .seconds(5))
        guard case .answer("busy") = call.replied("busy", error: .unavailable, now: start + .milliseconds(5)) else {
            Issue.record("a refusal of a call that is not retried is its answer")
            return
        }
        guard case .deadlineExceeded = call.silence(now: start + .seconds(5), connected: true) else {
            Issue.record("a silent connected server is deadline_exceeded")
            return
        }
    }

    @Test func aRefusalIsWaitedOutWithGrowingPausesThatNeverPassTheDeadline() {
        var call = attempts(deadline: .milliseconds(100))
        _ = call.begin(now: start)
        guard case .sendAgain(let first) = call.replied("busy", error: .unavailable, now: start + .milliseconds(1)) else {
            Issue.record("a refusal with time left is sent again")
            return
        }
        #expect(first == .milliseconds(20))
        _ = call.begin(now: start + .milliseconds(21))
        guard case .sendAgain(let second) = call.replied("busy", error: .unavailable, now: start + .milliseconds(22)) else {
            Issue.record("a second refusal with time left is sent again")
            return
        }
        #expect(second == .milliseconds(40))
        _ = call.begin(now: start + .milliseconds(62))
        // 70 ms in: 60 ms of pause would be due, 30 ms are left.
        guard case .sendAgain(let third) = call.replied("busy", error: .unavailable, now: start + .milliseconds(70)) else {
            Issue.record("a third refusal with time left is sent again")
            return
        }
        #expect(third == .milliseconds(30))
        // Within the last 20 ms, a refusal is the answer.
        _ = call.begin(now: start + .milliseconds(71))
        guard case .answer("still busy") = call.replied("still busy", error: .unavailable, now: start + .milliseconds(85)) else {
            Issue.record("a refusal with under 20 ms left is the answer")
            return
        }
    }

    @Test func theLastRefusalAnswersWhenTheDeadlineRunsOut() {
        var call = attempts(deadline: .seconds(1))
        _ = call.begin(now: start)
        _ = call.replied("read-only", error: .unavailable, now: start + .milliseconds(10))
        _ = call.begin(now: start + .milliseconds(30))
        // A later attempt answered by the server's own deadline: the refusal says more.
        guard case .refusal("read-only") = call.replied("late", error: .deadlineExceeded, now: start + .milliseconds(40)) else {
            Issue.record("a deadline after a refusal answers with the refusal")
            return
        }
        // A silence past the deadline, too, whatever the connection.
        guard case .refusal("read-only") = call.silence(now: start + .seconds(1), connected: false) else {
            Issue.record("a silence after a refusal answers with the refusal")
            return
        }
        // Any other reply is the answer.
        guard case .answer("ok") = call.replied("ok", error: nil, now: start + .milliseconds(50)) else {
            Issue.record("a good reply after a refusal is the answer")
            return
        }
    }

    @Test func aSilenceIsSentAgainUntilTheDeadlineThenSaysWhetherAnyServerWasThere() {
        let call = attempts(deadline: .seconds(2))
        guard case .sendAgain = call.silence(now: start + .seconds(1), connected: true) else {
            Issue.record("a silent attempt with time left is sent again")
            return
        }
        guard case .sendAgain = call.silence(now: start + .milliseconds(1999), connected: false) else {
            Issue.record("a silent attempt with time left is sent again, connected or not")
            return
        }
        guard case .unreachable = call.silence(now: start + .seconds(2), connected: false) else {
            Issue.record("no connection at the deadline is unreachable")
            return
        }
        guard case .deadlineExceeded = call.silence(now: start + .seconds(2), connected: true) else {
            Issue.record("a connected silent server at the deadline is deadline_exceeded")
            return
        }
    }
}
