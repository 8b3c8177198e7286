import BusCore
import Retry

/// What an RPC call does across its attempts, decided with no I/O and the time passed in: when
/// each attempt expires, whether a refusal or a silence is worth another attempt and after what
/// pause, and what the caller gets in the end. ``RPCClient`` does the sending, waiting and
/// sleeping around it; the rules are tested with plain values (`CallAttemptsTests`).
///
/// The rules, for a call that may be retried (idempotent, re-sent with its one id and key):
/// - each attempt gets at most `attemptTimeout`, within the call's deadline (`overall`);
/// - an `unavailable` answer (a busy server, its database away) is waited out with `backoff`
///   and sent again while more than ``minimumRetryWindow`` of the deadline is left;
/// - a silent attempt is sent again at once while any of the deadline is left;
/// - when the deadline runs out, the last refusal is the answer (its reason says why, where a
///   bare `deadline_exceeded` would not); with none, no connection at all is `unavailable`
///   (the peer is unreachable, not slow), and a connected but silent peer is
///   `deadline_exceeded`.
/// A call that may not be retried has one attempt with the whole deadline and gets what it gets.
struct CallAttempts<Reply> {
    /// Less than this left of the deadline is not worth another attempt after a refusal.
    static var minimumRetryWindow: Duration { .milliseconds(20) }

    let retry: Bool
    let started: ContinuousClock.Instant
    /// The call's deadline.
    let overall: ContinuousClock.Instant
    let attemptTimeout: Duration
    let backoff: Backoff
    /// The attempts begun so far.
    private(set) var attempt = 0
    private var lastRefusal: Reply?

    init(retry: Bool, started: ContinuousClock.Instant, overall: ContinuousClock.Instant, attemptTimeout: Duration, backoff: Backoff) {
        self.retry = retry
        self.started = started
        self.overall = overall
        self.attemptTimeout = attemptTimeout
        self.backoff = backoff
    }

    /// Begins the next attempt; returns when it expires. The first is timed from the call's
    /// start, so `now` is read only for the later ones.
    mutating func begin(now: @autoclosure () -> ContinuousClock.Instant) -> ContinuousClock.Instant {
        attempt += 1
        guard retry else { return overall }
        return min(overall, (attempt == 1 ? started : now()) + attemptTimeout)
    }

    /// What follows a reply.
    enum AfterReply {
        /// The caller's answer (a call completed: count it).
        case answer(Reply)
        /// The server's last refusal, which says more than the time-out that came after it.
        case refusal(Reply)
        /// Pause, then begin another attempt.
        case sendAgain(after: Duration)
    }

    /// What follows a reply whose error, if any, is `error`.
    mutating func replied(_ reply: Reply, error: ErrorCode?, now: ContinuousClock.Instant) -> AfterReply {
        if retry, error == .unavailable, now + Self.minimumRetryWindow < overall {
            lastRefusal = reply
            return .sendAgain(after: min(backoff.delay(after: attempt), overall - now))
        }
        if let lastRefusal, error == .deadlineExceeded { return .refusal(lastRefusal) }
        return .answer(reply)
    }

    /// What follows an attempt that expired with no reply.
    enum AfterSilence {
        /// Begin another attempt at once.
        case sendAgain
        /// The server's last refusal.
        case refusal(Reply)
        /// No connection to any server: `unavailable`.
        case unreachable
        /// Connected, and no answer in time: `deadline_exceeded`.
        case deadlineExceeded
    }

    /// What follows an attempt that expired; `connected` is whether any server connection is up.
    func silence(now: ContinuousClock.Instant, connected: Bool) -> AfterSilence {
        if retry, now < overall { return .sendAgain }
        if let lastRefusal { return .refusal(lastRefusal) }
        return connected ? .deadlineExceeded : .unreachable
    }
}
