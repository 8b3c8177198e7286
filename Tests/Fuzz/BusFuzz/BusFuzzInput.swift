import BusCore
import Foundation

/// One fuzz input through everything that parses bytes from the network before any handler runs:
/// the message body container (`Frames.unpack`), the envelope decoder (binary and JSON forms,
/// chosen by the first byte), and the payload decoder
/// (FastJSON with its Foundation fallback). Any input may be refused; none may crash, and what
/// decodes must survive a round trip unchanged.
enum BusFuzzInput {
    static func run(_ data: Data) {
        if let envelope = try? EnvelopeCodec.decode(data) {
            checkRoundTrip(envelope)
        }
        if case .success(let (body, attachments)) = Frames.unpack(data) {
            if let envelope = try? EnvelopeCodec.decode(body) { checkRoundTrip(envelope) }
            // Re-packing what was unpacked must unpack to the same parts.
            guard case .success(let again) = Frames.unpack(Frames.pack(body, attachments)),
                again.envelope == body, again.attachments == attachments
            else { fatalError("Frames.pack/unpack lost data for input of \(data.count) bytes") }
        }
        _ = Frames.splitDealer([data])
        _ = Frames.splitEvent([data])
        _ = Frames.splitRouted([data])
        _ = try? BusJSON.decode(SamplePayload.self, from: data)
    }

    /// What decodes re-encodes to bytes that decode to the same envelope. (The first decode may
    /// normalise: a missing `sentAt` becomes now, times keep millisecond precision; after one
    /// encoding the envelope must be a fixed point.)
    static func checkRoundTrip(_ envelope: Envelope) {
        let encoded = EnvelopeCodec.encode(envelope)
        guard let decoded = try? EnvelopeCodec.decode(encoded) else {
            fatalError("an envelope that decoded did not decode after encoding: \(Array(encoded))")
        }
        let again = EnvelopeCodec.encode(decoded)
        guard again == encoded, (try? EnvelopeCodec.decode(again)) == decoded else {
            fatalError(
                """
                envelope not stable in a round trip:
                \(Array(encoded))
                \(Array(again))
                """)
        }
    }
}

/// A payload with the shapes the contracts use: nested objects, arrays, optionals, dates, UUIDs,
/// enums and numbers.
struct SamplePayload: Codable {
    enum Kind: String, Codable { case accept, decline }
    struct Item: Codable {
        var name: String
        var count: Int?
    }
    var id: UUID
    var kind: Kind
    var at: Date?
    var version: String
    var items: [Item]
    var ratio: Double?
    var flag: Bool?
}
