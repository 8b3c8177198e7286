import Foundation
import Hex

/// A payload that writes and reads its own JSON, bypassing `Codable`'s containers.
///
/// Why: the acceptance path's four batch payloads cross the bus twice per batch, and with every
/// hop already batched, `Codable`'s generic machinery (boxed containers, key look-ups, member
/// sorting) was about a tenth of the CPU of Accounts, Audit and the gateway together
/// (`deploy/BENCHMARKS.md`, sixth pass). A hand-written coder appends the members in their sorted
/// order and reads them off the parsed document by their bytes.
///
/// It is an optimisation, never a second dialect: ``appendJSON(to:)`` writes byte for byte what
/// ``FastJSONEncoder`` (and Foundation, `BusJSON.encoder()`) writes for the value, and
/// ``init(json:)`` yields what the `Decodable` conformance yields or throws. Any throw makes
/// ``BusJSON`` redo the whole payload through `Codable`, whose value or error (naming the field)
/// then stands; so a coder only handles the shapes it expects and throws for anything else.
/// Tests compare both ways on every conforming type.
package typealias HandCodedJSON = HandEncodedJSON & HandDecodedJSON

/// The reading half of ``HandCodedJSON``, alone for values that are only ever read (an HTTP
/// request body).
package protocol HandDecodedJSON: Decodable {
    /// Reads the value from a parsed document, or throws to leave it to `Decodable`.
    init(json: JSONInput) throws
}

/// The writing half of ``HandCodedJSON``, alone for values that are only ever written (an HTTP
/// response body).
package protocol HandEncodedJSON: Encodable {
    /// Appends the value's JSON, exactly as its `Encodable` conformance encodes it.
    func appendJSON(to out: inout JSONOutput) throws
}

extension HandEncodedJSON {
    /// Appends `self` to `buffer`, or throws with `buffer` as it was.
    func appendJSON(to buffer: inout [UInt8]) throws(FastJSONFallback) {
        var out = JSONOutput(bytes: [])
        swap(&out.bytes, &buffer)
        let base = out.bytes.count
        do {
            try appendJSON(to: &out)
        } catch {
            out.bytes.removeSubrange(base...)
            swap(&out.bytes, &buffer)
            throw FastJSONFallback()
        }
        swap(&out.bytes, &buffer)
    }
}

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

/// Where a ``HandCodedJSON`` reads: one value of a document ``FastJSONParser`` parsed. Every
/// accessor throws for a value of another kind, so the payload goes to `Decodable`.
package struct JSONInput {
    let decoder: FastJSONDecoder

    /// A coder met a shape it does not handle.
    package struct Mismatch: Error {
        package init() {}
    }

    private var node: FastJSONNode { decoder.node }

    /// `null`: what an optional member decodes as `nil` from, as `decodeIfPresent` does.
    package var isNull: Bool { node.kind == .null }

    /// An array's items, or an object's members.
    package var count: Int { node.count }

    /// Calls `body` with each member of an object. Objects with escaped or non-ASCII keys are left
    /// to `Decodable` (its dictionary compares keys as `String`s); duplicate keys never get here
    /// (the parser leaves them to Foundation).
    package func members(_ body: (JSONKey, JSONInput) throws -> Void) throws {
        let node = self.node
        guard node.kind == .object, node.flag else { throw Mismatch() }
        let document = decoder.document
        var member = decoder.index + 1
        for _ in 0..<node.count {
            try body(
                JSONKey(bytes: document.nodes[member].slice(document.bytes)),
                JSONInput(decoder: FastJSONDecoder(document: document, index: member + 1)))
            member = document.nodes[member + 1].next
        }
    }

    /// Calls `body` with each item of an array.
    package func items(_ body: (JSONInput) throws -> Void) throws {
        let node = self.node
        guard node.kind == .array else { throw Mismatch() }
        let document = decoder.document
        var item = decoder.index + 1
        for _ in 0..<node.count {
            try body(JSONInput(decoder: FastJSONDecoder(document: document, index: item)))
            item = document.nodes[item].next
        }
    }

    package func string() throws -> String { try decoder.decode(String.self) }
    package func bool() throws -> Bool { try decoder.decode(Bool.self) }
    package func int() throws -> Int { try decoder.integer(Int.self) }
    package func int64() throws -> Int64 { try decoder.integer(Int64.self) }
    package func uuid() throws -> UUID { try decoder.decode(UUID.self) }
    package func date() throws -> Date { try decoder.decode(Date.self) }

    /// A `RawRepresentable` string enum by its raw value.
    package func rawValue<T: RawRepresentable>(_ type: T.Type) throws -> T where T.RawValue == String {
        guard let value = T(rawValue: try string()) else { throw Mismatch() }
        return value
    }

    // Optional members: `null` is `nil`.

    package func optionalString() throws -> String? { isNull ? nil : try string() }
    package func optionalUUID() throws -> UUID? { isNull ? nil : try uuid() }
    package func optionalDate() throws -> Date? { isNull ? nil : try date() }

    /// Any other value through its `Decodable` conformance (``FastJSONDecoder``).
    package func decoded<T: Decodable>(_ type: T.Type) throws -> T { try decoder.decode(T.self) }
}

/// A member's key as it lies in the document (plain ASCII, no escapes).
package struct JSONKey {
    let bytes: UnsafeBufferPointer<UInt8>

    package static func == (key: JSONKey, name: StaticString) -> Bool {
        guard key.bytes.count == name.utf8CodeUnitCount, let base = key.bytes.baseAddress else { return false }
        return memcmp(base, name.utf8Start, key.bytes.count) == 0
    }
}

extension BusJSON {
    /// `value`'s JSON from its hand-written coder alone, or `nil` where it throws (then `Codable`
    /// would run): for tests and `bus-bench codecs`, which must see the coder itself at work.
    package static func handEncoded<T: HandEncodedJSON>(_ value: T) -> Data? {
        var bytes: [UInt8] = []
        do throws(FastJSONFallback) {
            try value.appendJSON(to: &bytes)
        } catch { return nil }
        return Data(bytes)
    }

    /// `T` read from `data` by its hand-written coder alone, or `nil` where the document does not
    /// parse or the coder throws.
    package static func handDecoded<T: HandDecodedJSON>(_ type: T.Type, from data: Data) -> T? {
        data.withUnsafeBytes { raw -> T? in
            let bytes = raw.bindMemory(to: UInt8.self)
            var nodes: [FastJSONNode] = []
            var parser = FastJSONParser(bytes)
            guard (try? parser.parseDocument(into: &nodes)) != nil else { return nil }
            var fellBack = false
            return nodes.withUnsafeBufferPointer { nodes in
                withUnsafeMutablePointer(to: &fellBack) { flag in
                    let root = FastJSONDecoder(document: .init(bytes: bytes, nodes: nodes, fellBack: flag), index: 0)
                    guard let value = try? T(json: JSONInput(decoder: root)), !flag.pointee else { return nil }
                    return value
                }
            }
        }
    }

    /// `value`'s JSON through `Encodable` and the fast encoder, never its hand-written coder.
    package static func encodedWithoutHandCoder<T: Encodable>(_ value: T) throws -> Data {
        var bytes: [UInt8] = []
        try FastJSONEncoder.encodeThroughEncodable(value, appendingTo: &bytes)
        return Data(bytes)
    }

    /// `T` read by `Decodable` through the fast decoder, never by its hand-written coder: the
    /// generic path ``decode(_:from:)`` takes when the coder throws.
    package static func decodedWithoutHandCoder<T: Decodable>(_ type: T.Type, from data: Data) throws -> T {
        try data.withUnsafeBytes { raw in
            let bytes = raw.bindMemory(to: UInt8.self)
            var nodes: [FastJSONNode] = []
            var parser = FastJSONParser(bytes)
            try parser.parseDocument(into: &nodes)
            var fellBack = false
            let value = try nodes.withUnsafeBufferPointer { nodes in
                try withUnsafeMutablePointer(to: &fellBack) { flag in
                    try FastJSONDecoder(document: .init(bytes: bytes, nodes: nodes, fellBack: flag), index: 0).decode(T.self)
                }
            }
            if fellBack { throw FastJSONFallback() }
            return value
        }
    }
}
