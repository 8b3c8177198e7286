import Foundation

/// The frame layout on the wire: `[routing…][empty][envelope JSON][attachment…]`.
/// Bulk bytes travel as attachment frames, never base64 inside the JSON.
public enum Frames {
    /// A request as a ROUTER sees it, split at the empty delimiter.
    public struct Routed: Sendable {
        /// The routing frames to send the reply back through.
        public var route: [Data]
        public var envelope: Data
        public var attachments: [Data]
    }

    public enum Malformed: Error, Sendable, Equatable {
        /// No empty delimiter: nothing after the routing frames can be trusted.
        case missingDelimiter
        /// A delimiter but no envelope frame after it.
        case missingEnvelope
    }

    /// Splits what a ROUTER received. The routing frames are everything before the first empty
    /// frame (libzmq prepends the peer's identity; proxies may add more).
    public static func splitRouted(_ frames: [Data]) -> Result<Routed, Malformed> {
        guard let delimiter = frames.firstIndex(where: \.isEmpty), delimiter > 0 else {
            return .failure(.missingDelimiter)
        }
        guard delimiter + 1 < frames.count else { return .failure(.missingEnvelope) }
        return .success(Routed(
            route: Array(frames[..<delimiter]), envelope: frames[delimiter + 1],
            attachments: Array(frames[(delimiter + 2)...])))
    }

    /// What a DEALER sends (and receives): delimiter, envelope, attachments.
    public static func dealer(_ envelope: Data, _ attachments: [Data]) -> [Data] {
        [Data(), envelope] + attachments
    }

    /// Splits what a DEALER received; `nil` when it is not of our layout.
    public static func splitDealer(_ frames: [Data]) -> (envelope: Data, attachments: [Data])? {
        guard frames.count >= 2, frames[0].isEmpty else { return nil }
        return (frames[1], Array(frames[2...]))
    }
}
