/// Where an event numbered `sequence` stands against the last one a follower applied: the one
/// rule by which every follower of an outbox stream applies each event once and in order. An
/// outbox numbers its events without gaps (``OutboxSchema``), so anything but the next number is
/// either a repeat or proof that pub/sub lost some.
public enum EventOrder: Equatable, Sendable {
    /// The next one: apply it.
    case next
    /// Applied before (a repeat, or covered by a catch-up since): skip it.
    case seen
    /// One or more are missing before it, or there is no last one to compare with yet (nothing
    /// loaded): catch up first.
    case gap

    /// - Parameters:
    ///   - sequence: the event's number in its publisher's outbox.
    ///   - last: the last number applied, or nil before anything was loaded.
    public init(_ sequence: Int64, after last: Int64?) {
        guard let last else {
            self = .gap
            return
        }
        if sequence <= last {
            self = .seen
        } else {
            self = sequence == last + 1 ? .next : .gap
        }
    }
}
