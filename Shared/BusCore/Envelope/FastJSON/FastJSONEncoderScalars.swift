import Foundation
import Hex

/// Scalars as Foundation's `JSONEncoder` writes them (swift-foundation's `JSONWriter`): numbers
/// by their `description` (a float's trailing `.0` dropped), strings as ``JSONString`` writes them.
extension FastJSONEncoderState {
    func appendASCII(_ text: StaticString) {
        bytes.append(contentsOf: UnsafeBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount))
    }

    func append(_ value: Bool) { value ? appendASCII("true") : appendASCII("false") }

    func append(_ value: Int64) {
        if value < 0 { bytes.append(UInt8(ascii: "-")) }
        append(value.magnitude)
    }

    func append(_ value: UInt64) {
        let start = bytes.count
        var rest = value
        repeat {
            bytes.append(UInt8(ascii: "0") + UInt8(rest % 10))
            rest /= 10
        } while rest > 0
        bytes[start...].reverse()
    }

    /// Non-finite values are an error to Foundation (its default strategy): fall back.
    func append(_ value: Double) throws(FastJSONFallback) {
        guard value.isFinite else { throw fallback() }
        appendNumber(value.description)
    }

    func append(_ value: Float) throws(FastJSONFallback) {
        guard value.isFinite else { throw fallback() }
        appendNumber(value.description)
    }

    private func appendNumber(_ description: String) {
        var text = description
        if text.hasSuffix(".0") { text.removeLast(2) }
        bytes.append(contentsOf: text.utf8)
    }

    /// `UUID.uuidString`'s form (upper case) in quotes, which is what `UUID.encode(to:)` writes.
    func append(uuid: UUID) {
        bytes.append(UInt8(ascii: "\""))
        Hex.appendUUID(uuid, uppercase: true, to: &bytes)
        bytes.append(UInt8(ascii: "\""))
    }

    /// Appends `text` quoted and escaped (``JSONString``).
    func append(_ text: String) { JSONString.append(text, to: &bytes) }

    /// Appends `text` quoted and escaped; returns whether it was all ASCII and whether it needed
    /// no escapes (then the bytes between the quotes are its UTF-8, which keys are sorted by).
    func appendString(_ text: String) -> (ascii: Bool, clean: Bool) { JSONString.append(text, to: &bytes) }
}
