import Foundation

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
    package func optionalRawValue<T: RawRepresentable>(_ type: T.Type) throws -> T? where T.RawValue == String {
        isNull ? nil : try rawValue(T.self)
    }

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
