import Foundation

/// The splits of ``Frames`` on a message read in place (``ReceivedFrames``): the same layouts and
/// the same answers as the `[Data]` versions, but the envelope stays a view of libzmq's buffer
/// (decoded from there) and only routing frames and attachments are copied out.
extension Frames {
    /// A request as a ROUTER sees it, its envelope borrowed.
    struct RoutedView {
        var route: [Data]
        var envelope: UnsafeRawBufferPointer
        var attachments: [Data]
    }

    static func splitRouted(_ frames: ReceivedFrames) -> Result<RoutedView, Malformed> {
        let count = frames.count
        if let delimiter = (0..<count).first(where: { frames.size($0) == 0 }) {
            guard delimiter > 0 else { return .failure(.missingDelimiter) }
            guard delimiter + 1 < count else { return .failure(.missingEnvelope) }
            return .success(
                RoutedView(
                    route: (0..<delimiter).map(frames.data), envelope: frames.bytes(delimiter + 1),
                    attachments: (delimiter + 2..<count).map(frames.data)))
        }
        guard count >= 2 else { return .failure(.missingDelimiter) }
        return unpack(frames.bytes(count - 1)).map {
            RoutedView(route: (0..<count - 1).map(frames.data), envelope: $0.envelope, attachments: $0.attachments)
        }
    }

    /// What a DEALER received; `nil` when it is not of our layout.
    static func splitDealer(_ frames: ReceivedFrames) -> (envelope: UnsafeRawBufferPointer, attachments: [Data])? {
        let count = frames.count
        if count >= 2, frames.size(0) == 0 { return (frames.bytes(1), (2..<count).map(frames.data)) }  // old layout
        guard count == 1, case .success(let parts) = unpack(frames.bytes(0)) else { return nil }
        return parts
    }
}
