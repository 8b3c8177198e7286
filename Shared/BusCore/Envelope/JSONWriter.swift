import Foundation
import Hex

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
        Hex.appendUUID(uuid, to: &bytes)
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

    private mutating func appendString(_ text: String) { JSONString.append(text, to: &bytes) }
}
