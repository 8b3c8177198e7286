import Foundation
import Hex

/// Where a ``HandCodedJSON`` writes: a byte buffer and the JSON grammar's punctuation. Members are
/// written in the order the coder calls ``key(_:)``, which must be their keys' sorted (UTF-8 byte)
/// order, the order `.sortedKeys` gives; a `nil` optional is left out, as `encodeIfPresent` does.
package struct JSONOutput {
    package var bytes: [UInt8]

    package mutating func beginObject() { bytes.append(UInt8(ascii: "{")) }
    package mutating func endObject() { bytes.append(UInt8(ascii: "}")) }
    package mutating func beginArray() { bytes.append(UInt8(ascii: "[")) }
    package mutating func endArray() { bytes.append(UInt8(ascii: "]")) }

    /// Starts a member: the comma after the one before (no value ends with `{`), then the key. Keys
    /// are plain ASCII names, written without escaping.
    package mutating func key(_ name: StaticString) {
        if bytes.last != UInt8(ascii: "{") { bytes.append(UInt8(ascii: ",")) }
        bytes.append(UInt8(ascii: "\""))
        bytes.append(contentsOf: UnsafeBufferPointer(start: name.utf8Start, count: name.utf8CodeUnitCount))
        bytes.append(UInt8(ascii: "\""))
        bytes.append(UInt8(ascii: ":"))
    }

    /// Starts an array's item: the comma after the one before (no value ends with `[`).
    package mutating func item() {
        if bytes.last != UInt8(ascii: "[") { bytes.append(UInt8(ascii: ",")) }
    }

    package mutating func string(_ value: String) { JSONString.append(value, to: &bytes) }

    package mutating func null() { bytes.append(contentsOf: "null".utf8) }

    package mutating func bool(_ value: Bool) {
        value ? bytes.append(contentsOf: "true".utf8) : bytes.append(contentsOf: "false".utf8)
    }

    package mutating func int(_ value: Int64) {
        if value < 0 { bytes.append(UInt8(ascii: "-")) }
        let start = bytes.count
        var rest = value.magnitude
        repeat {
            bytes.append(UInt8(ascii: "0") + UInt8(rest % 10))
            rest /= 10
        } while rest > 0
        bytes[start...].reverse()
    }

    /// `UUID.uuidString`'s upper-case form, as `UUID.encode(to:)` writes it; lower case is the
    /// string ``Hex/uuid(_:uppercase:)`` gives.
    package mutating func uuid(_ value: UUID, uppercase: Bool = true) {
        bytes.append(UInt8(ascii: "\""))
        Hex.appendUUID(value, uppercase: uppercase, to: &bytes)
        bytes.append(UInt8(ascii: "\""))
    }

    /// ``Timestamp``'s form, as BusJSON's date strategy writes it.
    package mutating func date(_ value: Date) {
        bytes.append(UInt8(ascii: "\""))
        Timestamp.append(value, to: &bytes)
        bytes.append(UInt8(ascii: "\""))
    }

    /// Any other value through its `Encodable` conformance (``FastJSONEncoder``): for members rare
    /// on the hot path, such as a batch item's error.
    package mutating func encoded<T: Encodable>(_ value: T) throws {
        try FastJSONEncoder.encode(value, appendingTo: &bytes)
    }

    // Members whose `nil` is left out.

    package mutating func member(_ name: StaticString, _ value: String?) {
        guard let value else { return }
        key(name)
        string(value)
    }

    package mutating func member(_ name: StaticString, _ value: Date?) {
        guard let value else { return }
        key(name)
        date(value)
    }

    package mutating func member(_ name: StaticString, _ value: UUID?) {
        guard let value else { return }
        key(name)
        uuid(value)
    }

    // Members whose `nil` is written as `null`, as `encode(_:forKey:)` of an optional does.

    package mutating func nullable(_ name: StaticString, _ value: String?) {
        key(name)
        if let value { string(value) } else { null() }
    }

    package mutating func nullable(_ name: StaticString, _ value: Date?) {
        key(name)
        if let value { date(value) } else { null() }
    }

    package mutating func member(_ name: StaticString, _ value: Bool) {
        key(name)
        bool(value)
    }

    package mutating func member(_ name: StaticString, _ value: Int64) {
        key(name)
        int(value)
    }
}
