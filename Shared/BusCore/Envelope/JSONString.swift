import Hex

/// The one way our code writes a JSON string literal: payloads (``FastJSONEncoder`` and the
/// hand-written coders' ``JSONOutput``), log lines and health bodies (ServiceKit). It writes what
/// Foundation's `JSONEncoder` writes (swift-foundation's `JSONWriter`), so the fast payload
/// encoder's bytes match the fallback's: `"` `\` and control characters escaped (`\b \f \n \r \t`,
/// else `\u00xx` in lower-case hex), `/` left alone (`.withoutEscapingSlashes`), everything else,
/// U+2028 and U+2029 included, as UTF-8.
public enum JSONString {
    /// Appends `text` quoted and escaped to `bytes`; returns whether it was all ASCII and whether
    /// it needed no escapes (then the bytes between the quotes are its UTF-8, which the payload
    /// encoder sorts keys by).
    @discardableResult
    public static func append(_ text: String, to bytes: inout [UInt8]) -> (ascii: Bool, clean: Bool) {
        bytes.append(UInt8(ascii: "\""))
        var text = text
        let flags = text.withUTF8 { utf8 -> (ascii: Bool, clean: Bool) in
            var high: UInt8 = 0
            var clean = true
            // Runs that need no escaping (most strings are one) are copied whole: byte by byte,
            // a 10 KB legal text with a newline every line cost as much as Foundation.
            var run = 0
            for index in 0..<utf8.count {
                let byte = utf8[index]
                high |= byte
                guard byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") else { continue }
                bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[run..<index]))
                appendEscaping(byte, to: &bytes)
                clean = false
                run = index + 1
            }
            bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[run...]))
            return (high < 0x80, clean)
        }
        bytes.append(UInt8(ascii: "\""))
        return flags
    }

    /// `text` as a JSON string literal, quotes included.
    public static func quoted(_ text: String) -> String {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(text.utf8.count + 2)
        append(text, to: &bytes)
        return String(decoding: bytes, as: UTF8.self)
    }

    /// A JSON object from members whose values are JSON text already, in the order given (log
    /// lines and health bodies choose their order; `JSONEncoder` would sort or shuffle it).
    public static func object(_ members: [(key: String, encodedValue: String)]) -> String {
        "{" + members.map { quoted($0.key) + ":" + $0.encodedValue }.joined(separator: ",") + "}"
    }

    private static func appendEscaping(_ byte: UInt8, to bytes: inout [UInt8]) {
        switch byte {
        case UInt8(ascii: "\""), UInt8(ascii: "\\"):
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
            bytes.append(contentsOf: [0x5C, UInt8(ascii: "u"), UInt8(ascii: "0"), UInt8(ascii: "0")])
            Hex.append(byte, to: &bytes)
        default: bytes.append(byte)
        }
    }
}
