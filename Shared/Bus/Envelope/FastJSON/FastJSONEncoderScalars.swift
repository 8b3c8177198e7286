import Foundation
import Hex

/// Scalars as Foundation's `JSONEncoder` writes them (swift-foundation's `JSONWriter`): numbers
/// by their `description` (a float's trailing `.0` dropped), strings with `"` `\` and control
/// characters escaped (`\b \f \n \r \t`, else `\u00xx` in lower-case hex), `/` left alone
/// (`.withoutEscapingSlashes`), everything else, U+2028 and U+2029 included, as UTF-8.
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

    private static let upperHex = Array("0123456789ABCDEF".utf8)

    /// `UUID.uuidString`'s form (upper case) in quotes, which is what `UUID.encode(to:)` writes.
    func append(uuid: UUID) {
        bytes.append(UInt8(ascii: "\""))
        withUnsafeBytes(of: uuid.uuid) { raw in
            for (index, byte) in raw.enumerated() {
                if index == 4 || index == 6 || index == 8 || index == 10 { bytes.append(UInt8(ascii: "-")) }
                bytes.append(Self.upperHex[Int(byte >> 4)])
                bytes.append(Self.upperHex[Int(byte & 0x0F)])
            }
        }
        bytes.append(UInt8(ascii: "\""))
    }

    /// Appends `text` quoted and escaped.
    func append(_ text: String) { _ = appendString(text) }

    /// Appends `text` quoted and escaped; returns whether it was all ASCII and whether it needed
    /// no escapes (then the bytes between the quotes are its UTF-8, which keys are sorted by).
    func appendString(_ text: String) -> (ascii: Bool, clean: Bool) {
        bytes.append(UInt8(ascii: "\""))
        var text = text
        let flags = text.withUTF8 { utf8 -> (ascii: Bool, clean: Bool) in
            var high: UInt8 = 0
            var clean = 0
            while clean < utf8.count {
                let byte = utf8[clean]
                if byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") { break }
                high |= byte
                clean += 1
            }
            bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[..<clean]))
            for byte in utf8[clean...] {
                high |= byte
                appendEscaping(byte)
            }
            return (high < 0x80, clean == utf8.count)
        }
        bytes.append(UInt8(ascii: "\""))
        return flags
    }

    private func appendEscaping(_ byte: UInt8) {
        switch byte {
        case UInt8(ascii: "\""):
            bytes.append(0x5C)
            bytes.append(byte)
        case UInt8(ascii: "\\"):
            bytes.append(0x5C)
            bytes.append(byte)
        case 0x08:
            bytes.append(0x5C)
            bytes.append(UInt8(ascii: "b"))
        case 0x0C:
            bytes.append(0x5C)
            bytes.append(UInt8(ascii: "f"))
        case 0x0A:
            bytes.append(0x5C)
            bytes.append(UInt8(ascii: "n"))
        case 0x0D:
            bytes.append(0x5C)
            bytes.append(UInt8(ascii: "r"))
        case 0x09:
            bytes.append(0x5C)
            bytes.append(UInt8(ascii: "t"))
        case 0..<0x20:
            appendASCII("\\u00")
            Hex.append(byte, to: &bytes)
        default: bytes.append(byte)
        }
    }
}
