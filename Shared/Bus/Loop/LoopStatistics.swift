import Synchronization

/// How a socket loop has batched its work so far: what the bench prints to show where wake-ups
/// go, and what a service may export. Counted per turn, not per message (relaxed atomic adds).
public struct LoopStatistics: Sendable, Equatable {
    /// Turns of the loop: each takes the queue, receives what waits and sends.
    public var turns = 0
    /// Times the loop slept in `poll` (each one costs a wake-up when work comes).
    public var sleeps = 0
    /// Eventfd writes by senders that found the loop asleep.
    public var wakeUpSignals = 0
    public var received = 0
    public var sent = 0

    public init() {}

    /// Per-field difference, for a figure over an interval.
    public static func - (a: LoopStatistics, b: LoopStatistics) -> LoopStatistics {
        var d = LoopStatistics()
        d.turns = a.turns - b.turns
        d.sleeps = a.sleeps - b.sleeps
        d.wakeUpSignals = a.wakeUpSignals - b.wakeUpSignals
        d.received = a.received - b.received
        d.sent = a.sent - b.sent
        return d
    }
}

/// The loop's live counters.
final class LoopCounters: Sendable {
    let turns = Atomic<Int>(0)
    let sleeps = Atomic<Int>(0)
    let wakeUpSignals = Atomic<Int>(0)
    let received = Atomic<Int>(0)
    let sent = Atomic<Int>(0)

    var snapshot: LoopStatistics {
        var s = LoopStatistics()
        s.turns = turns.load(ordering: .relaxed)
        s.sleeps = sleeps.load(ordering: .relaxed)
        s.wakeUpSignals = wakeUpSignals.load(ordering: .relaxed)
        s.received = received.load(ordering: .relaxed)
        s.sent = sent.load(ordering: .relaxed)
        return s
    }
}
