import BusCore
import Foundation

/// `<service>.events.dead-letters` and `<service>.events.dead-letters.retry`: the events a
/// service's consumers parked after their handler kept failing, and applying one again once its
/// cause is fixed. Operators only; every service that consumes events answers both.
public enum DeadLetters {
    public static func listType(for service: String) -> String { "\(service).events.dead-letters" }
    public static func retryType(for service: String) -> String { "\(service).events.dead-letters.retry" }

    public struct ListRequest: Codable, Sendable, Equatable {
        /// Include letters already retried successfully.
        public var includeRetried: Bool

        public init(includeRetried: Bool = false) { self.includeRetried = includeRetried }
    }

    public struct Letter: Codable, Sendable, Equatable {
        public var publisher: String
        public var sequence: Int64
        public var type: String
        public var error: String
        public var attempts: Int
        public var parkedAt: Date
        public var retriedAt: Date?

        public init(publisher: String, sequence: Int64, type: String, error: String, attempts: Int, parkedAt: Date, retriedAt: Date?) {
            (self.publisher, self.sequence, self.type, self.error) = (publisher, sequence, type, error)
            (self.attempts, self.parkedAt, self.retriedAt) = (attempts, parkedAt, retriedAt)
        }
    }

    public struct ListReply: Codable, Sendable, Equatable {
        public var letters: [Letter]
        public init(letters: [Letter]) { self.letters = letters }
    }

    public struct RetryRequest: Codable, Sendable, Equatable {
        public var publisher: String
        public var sequence: Int64
        public init(publisher: String, sequence: Int64) { (self.publisher, self.sequence) = (publisher, sequence) }
    }

    /// The letter after the retry: `retriedAt` set when the event applied; otherwise the call
    /// fails with the handler's error and the letter keeps it.
    public struct RetryReply: Codable, Sendable, Equatable {
        public var letter: Letter
        public init(letter: Letter) { self.letter = letter }
    }
}
