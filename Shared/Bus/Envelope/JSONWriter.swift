import Foundation

/// Appends JSON text for the envelope header to a byte buffer (the counterpart of ``JSONScanner``).
struct JSONWriter {
    private(set) var bytes: [UInt8] = []
    private var needsComma = false

    init(capacity: Int) {
        bytes.reserveCapacity(capacity)
        bytes.append(UInt8(ascii: "{"))
    }

    mutating func member(_ key: String, _ value: String?) {
        guard let value else { return }
        startMember(key)
        appendString(value)
    }

    mutating func member(_ key: String, _ value: Int64?) {
        guard let value else { return }
        startMember(key)
        bytes.append(contentsOf: String(value).utf8)
    }

    mutating func member(_ key: String, uuid: UUID?) {
        guard let uuid else { return }
        startMember(key)
        bytes.append(UInt8(ascii: "\""))
        MessageID.appendText(of: uuid, to: &bytes)
        bytes.append(UInt8(ascii: "\""))
    }

    mutating func member(_ key: String, date: Date?) {
        guard let date else { return }
        startMember(key)
        bytes.append(UInt8(ascii: "\""))
        Timestamp.append(date, to: &bytes)
        bytes.append(UInt8(ascii: "\""))
    }

    /// A member whose value is JSON text already (the payload, a nested object).
    mutating func member(_ key: String, rawJSON: Data?) {
        guard let rawJSON else { return }
        startMember(key)
        bytes.append(contentsOf: rawJSON)
    }

    mutating func finish() -> Data {
        bytes.append(UInt8(ascii: "}"))
        return Data(bytes)
    }

    private mutating func startMember(_ key: String) {
        if needsComma { bytes.append(UInt8(ascii: ",")) }
        needsComma = true
        appendString(key)
        bytes.append(UInt8(ascii: ":"))
    }

    private mutating func appendString(_ text: String) {
        bytes.append(UInt8(ascii: "\""))
        // Most header strings need no escaping: copy them whole.
        if !text.utf8.contains(where: { $0 < 0x20 || $0 == UInt8(ascii: "\"") || $0 == UInt8(ascii: "\\") }) {
            bytes.append(contentsOf: text.utf8)
            bytes.append(UInt8(ascii: "\""))
            return
        }
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "\""): bytes.append(contentsOf: [0x5C, 0x22])
            case UInt8(ascii: "\\"): bytes.append(contentsOf: [0x5C, 0x5C])
            case 0x0A: bytes.append(contentsOf: [0x5C, UInt8(ascii: "n")])
            case 0x0D: bytes.append(contentsOf: [0x5C, UInt8(ascii: "r")])
            case 0x09: bytes.append(contentsOf: [0x5C, UInt8(ascii: "t")])
            case 0..<0x20:
                let hex = String(byte, radix: 16)
                bytes.append(contentsOf: Array("\\u00".utf8) + Array((hex.count == 1 ? "0" + hex : hex).utf8))
            default: bytes.append(byte)
            }
        }
        bytes.append(UInt8(ascii: "\""))
    }
}
