import Logging

/// Consecutive failures of a loop that keeps retrying (a consumer catching up, a follower, a
/// sweep): the first few are expected while a peer restarts or starts after this process, as
/// containers do, and are logged at debug; from the ``warningFrom``-th in a row they are
/// warnings, worth an operator's eye. A success after a warned streak is worth saying once.
public struct FailureStreak: Sendable {
    /// The failure in a row that is the first one logged as a warning.
    public static let defaultWarningFrom = 3

    public let warningFrom: Int
    /// Failures since the last success.
    public private(set) var count = 0

    public init(warningFrom: Int = FailureStreak.defaultWarningFrom) {
        precondition(warningFrom >= 1, "a streak warns from its first failure at the earliest")
        self.warningFrom = warningFrom
    }

    /// Counts a failure; the level to log it at.
    public mutating func failed() -> Logger.Level {
        count += 1
        return count >= warningFrom ? .warning : .debug
    }

    /// Ends the streak; the number of failures it had when they had reached a warning (so the
    /// recovery is worth logging), else `nil`.
    public mutating func succeeded() -> Int? {
        defer { count = 0 }
        return count >= warningFrom ? count : nil
    }
}
