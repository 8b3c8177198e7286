import BusCore

/// `<service>.events.since`: the events a service published after a sequence number, for a
/// subscriber that was down, joined late or saw a gap. Every service with an outbox answers it.
///
/// The events travel as attachment frames, one event envelope each (exactly as published), so a
/// subscriber handles caught-up and live events with the same code.
public enum EventsSince {
    public static func type(for service: String) -> String { "\(service).events.since" }

    public struct Request: Codable, Sendable, Equatable {
        /// Return events with a sequence number greater than this.
        public var after: Int64
        /// At most this many (the server caps it at 1,000).
        public var limit: Int

        public init(after: Int64, limit: Int = 500) {
            self.after = after
            self.limit = limit
        }
    }

    public struct Reply: Codable, Sendable, Equatable {
        /// How many event envelopes follow as attachments, in sequence order.
        public var count: Int
        /// The highest sequence number published so far: more events wait when it is beyond the
        /// last one returned.
        public var latestSequence: Int64

        public init(count: Int, latestSequence: Int64) {
            self.count = count
            self.latestSequence = latestSequence
        }
    }
}
