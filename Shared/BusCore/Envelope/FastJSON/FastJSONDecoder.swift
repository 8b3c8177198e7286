import Foundation

/// A `Decoder` over a parsed document (``FastJSONNode``), for payloads. Foundation's `JSONDecoder` was the
/// largest single cost of a round trip (about 15% of CPU: coding-path bookkeeping, boxed
/// containers, a dictionary per object). This one decodes the common shapes (objects, arrays,
/// strings, numbers, booleans, `Date` as ``Timestamp``) and throws ``FastJSONFallback`` for
/// anything else or any error, so that ``BusJSON`` re-runs Foundation and its result (or error
/// message, naming the field) is the one the caller sees.
struct FastJSONDecoder: Decoder {
    let document: Document
    /// This value's node in ``Document/nodes``.
    let index: Int

    /// One decode's parsed document and its fallback flag, borrowed for the length of
    /// ``decode(_:from:)``: plain pointers, so passing decoders and containers around costs no
    /// reference counting.
    ///
    /// A `Decodable` may catch an error and try another reading (`try?`); had Foundation
    /// accepted the first, the results would differ. So every fallback is recorded in
    /// `fellBack`, and a decode that raised one is redone by Foundation even if it then succeeded.
    struct Document {
        let bytes: UnsafeBufferPointer<UInt8>
        let nodes: UnsafeBufferPointer<FastJSONNode>
        let fellBack: UnsafeMutablePointer<Bool>

        func fallback() -> FastJSONFallback {
            fellBack.pointee = true
            return FastJSONFallback()
        }
    }

    var node: FastJSONNode { document.nodes[index] }
    var codingPath: [any CodingKey] { [] }
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    /// Decodes `T` from `data`, or throws ``FastJSONFallback``.
    static func decode<T: Decodable>(_ type: T.Type, from data: Data) throws(FastJSONFallback) -> T {
        try withRoot(of: data) { root in
            // A payload with its own coder reads itself; should it throw, `Decodable` runs.
            if let handCoded = T.self as? any HandDecodedJSON.Type {
                if let value = try? handCoded.init(json: JSONInput(decoder: root)), !root.document.fellBack.pointee { return value as! T }
                root.document.fellBack.pointee = false
            }
            return try root.decode(T.self)
        }
    }

    /// Parses `data` and runs `body` on its root value. Throws ``FastJSONFallback`` for a document
    /// the parser leaves to Foundation, for any error of `body`, and when `body` met a fallback,
    /// even one it caught.
    static func withRoot<R>(of data: Data, _ body: (FastJSONDecoder) throws -> R) throws(FastJSONFallback) -> R {
        do {
            return try data.withUnsafeBytes { raw in
                let bytes = raw.bindMemory(to: UInt8.self)
                var nodes: [FastJSONNode] = []
                nodes.reserveCapacity(min(bytes.count / 4 + 1, 64))
                var parser = FastJSONParser(bytes)
                try parser.parseDocument(into: &nodes)
                var fellBack = false
                let value = try nodes.withUnsafeBufferPointer { nodes in
                    try withUnsafeMutablePointer(to: &fellBack) { flag in
                        try body(FastJSONDecoder(document: Document(bytes: bytes, nodes: nodes, fellBack: flag), index: 0))
                    }
                }
                if fellBack { throw FastJSONFallback() }
                return value
            }
        } catch {
            throw FastJSONFallback()
        }
    }

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        guard node.kind == .object else { throw document.fallback() }
        return KeyedDecodingContainer(KeyedContainer(document: document, object: index))
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
        guard node.kind == .array else { throw document.fallback() }
        return UnkeyedContainer(document: document, array: index)
    }

    func singleValueContainer() throws -> any SingleValueDecodingContainer { self }

    // MARK: Scalars

    func decode<T: Decodable>(_ type: T.Type) throws -> T {
        // Types Foundation's decoder treats specially: Date by BusJSON's strategy, the rest left to it.
        if T.self == String.self { return try decode(String.self) as! T }
        if T.self == Date.self {
            let node = self.node
            guard node.kind == .string, !node.flag, let date = Timestamp.parse(buffer: node.slice(document.bytes)) else {
                throw document.fallback()
            }
            return date as! T
        }
        if T.self == UUID.self {
            // Foundation's `UUID(uuidString:)` on Linux parses with 16 `sscanf` calls: 1-2% of each
            // service's CPU under load. Anything the canonical parser refuses goes to Foundation.
            let node = self.node
            guard node.kind == .string, !node.flag, let id = MessageID.parse(node.slice(document.bytes)) else {
                throw document.fallback()
            }
            return id as! T
        }
        if T.self == Data.self || T.self == URL.self || T.self == Decimal.self { throw document.fallback() }
        return try T(from: self)
    }

    func decodeNil() -> Bool { node.kind == .null }

    func decode(_ type: Bool.Type) throws -> Bool {
        let node = self.node
        guard node.kind == .bool else { throw document.fallback() }
        return node.flag
    }

    func decode(_ type: String.Type) throws -> String {
        let node = self.node
        guard node.kind == .string else { throw document.fallback() }
        do { return try FastJSONNode.text(document.bytes, node) } catch { throw document.fallback() }
    }

    /// Plain integers only (`-?digits`); `1.0` or `1e2`, which Foundation also takes, fall back.
    func integer<T: FixedWidthInteger>(_ type: T.Type) throws -> T {
        let node = self.node
        guard node.kind == .number else { throw document.fallback() }
        let bytes = document.bytes
        let range = node.start..<node.end
        var index = range.lowerBound
        let negative = bytes[index] == UInt8(ascii: "-")
        if negative { index += 1 }
        var magnitude: UInt64 = 0
        while index < range.upperBound {
            let digit = bytes[index] &- UInt8(ascii: "0")
            guard digit < 10 else { throw document.fallback() }
            let (times10, o1) = magnitude.multipliedReportingOverflow(by: 10)
            let (next, o2) = times10.addingReportingOverflow(UInt64(digit))
            guard !o1, !o2 else { throw document.fallback() }
            magnitude = next
            index += 1
        }
        if negative {
            guard magnitude <= UInt64(Int64.max) + 1 else { throw document.fallback() }
            let signed = magnitude == UInt64(Int64.max) + 1 ? Int64.min : -Int64(magnitude)
            guard let exact = T(exactly: signed) else { throw document.fallback() }
            return exact
        }
        guard let exact = T(exactly: magnitude) else { throw document.fallback() }
        return exact
    }

    func double() throws -> Double {
        let node = self.node
        guard node.kind == .number, let number = Double(String(decoding: node.slice(document.bytes), as: UTF8.self)),
            number.isFinite
        else { throw document.fallback() }
        return number
    }

    func decode(_ type: Double.Type) throws -> Double { try double() }
    /// Left to Foundation: converting through `Double` could round differently from its parse.
    func decode(_ type: Float.Type) throws -> Float { throw document.fallback() }
    func decode(_ type: Int.Type) throws -> Int { try integer(Int.self) }
    func decode(_ type: Int8.Type) throws -> Int8 { try integer(Int8.self) }
    func decode(_ type: Int16.Type) throws -> Int16 { try integer(Int16.self) }
    func decode(_ type: Int32.Type) throws -> Int32 { try integer(Int32.self) }
    func decode(_ type: Int64.Type) throws -> Int64 { try integer(Int64.self) }
    func decode(_ type: UInt.Type) throws -> UInt { try integer(UInt.self) }
    func decode(_ type: UInt8.Type) throws -> UInt8 { try integer(UInt8.self) }
    func decode(_ type: UInt16.Type) throws -> UInt16 { try integer(UInt16.self) }
    func decode(_ type: UInt32.Type) throws -> UInt32 { try integer(UInt32.self) }
    func decode(_ type: UInt64.Type) throws -> UInt64 { try integer(UInt64.self) }
}

extension FastJSONDecoder: SingleValueDecodingContainer {}
