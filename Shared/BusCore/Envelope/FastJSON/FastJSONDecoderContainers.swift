import Foundation

extension FastJSONDecoder {
    /// An object's members; lookups scan them (payload objects are small, and a scan of a few
    /// short keys is cheaper than building a dictionary per object).
    struct KeyedContainer<Key: CodingKey>: KeyedDecodingContainerProtocol {
        let document: Document
        /// The object's node.
        let object: Int

        var codingPath: [any CodingKey] { [] }

        /// The node of each member's key (its value's node follows it).
        private var keyNodes: [Int] {
            var keys: [Int] = []
            var member = object + 1
            for _ in 0..<document.nodes[object].count {
                keys.append(member)
                member = document.nodes[member + 1].next
            }
            return keys
        }

        var allKeys: [Key] {
            keyNodes.compactMap { (try? FastJSONNode.text(document.bytes, document.nodes[$0])).flatMap(Key.init(stringValue:)) }
        }

        /// The node of the value of `key`. Plain ASCII names against an object of plain ASCII keys
        /// compare bytes; anything else compares `String`s, as Foundation's dictionary does.
        private func value(_ key: Key) -> Int? {
            var name = key.stringValue
            let nodes = document.nodes
            let count = nodes[object].count
            var member = object + 1
            let plain = nodes[object].flag && name.utf8.allSatisfy { $0 < 0x80 }
            if plain {
                return name.withUTF8 { name -> Int? in
                    for _ in 0..<count {
                        let key = nodes[member]
                        if key.end - key.start == name.count,
                            name.isEmpty || memcmp(document.bytes.baseAddress! + key.start, name.baseAddress!, name.count) == 0
                        {
                            return member + 1
                        }
                        member = nodes[member + 1].next
                    }
                    return nil
                }
            }
            for _ in 0..<count {
                if let text = try? FastJSONNode.text(document.bytes, nodes[member]), text == name { return member + 1 }
                member = nodes[member + 1].next
            }
            return nil
        }

        /// The member as a decoder; a missing key falls back (Foundation names it in its error).
        private func child(_ key: Key) throws -> FastJSONDecoder {
            guard let value = value(key) else { throw document.fallback() }
            return FastJSONDecoder(document: document, index: value)
        }

        func contains(_ key: Key) -> Bool { value(key) != nil }

        func decodeNil(forKey key: Key) throws -> Bool { try child(key).decodeNil() }

        func decodeIfPresent<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T? {
            guard let value = value(key) else { return nil }
            let child = FastJSONDecoder(document: document, index: value)
            return child.decodeNil() ? nil : try child.decode(T.self)
        }

        func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T { try child(key).decode(T.self) }
        func decode(_ type: Bool.Type, forKey key: Key) throws -> Bool { try child(key).decode(Bool.self) }
        func decode(_ type: String.Type, forKey key: Key) throws -> String { try child(key).decode(String.self) }
        func decode(_ type: Double.Type, forKey key: Key) throws -> Double { try child(key).decode(Double.self) }
        func decode(_ type: Float.Type, forKey key: Key) throws -> Float { try child(key).decode(Float.self) }
        func decode(_ type: Int.Type, forKey key: Key) throws -> Int { try child(key).integer(Int.self) }
        func decode(_ type: Int8.Type, forKey key: Key) throws -> Int8 { try child(key).integer(Int8.self) }
        func decode(_ type: Int16.Type, forKey key: Key) throws -> Int16 { try child(key).integer(Int16.self) }
        func decode(_ type: Int32.Type, forKey key: Key) throws -> Int32 { try child(key).integer(Int32.self) }
        func decode(_ type: Int64.Type, forKey key: Key) throws -> Int64 { try child(key).integer(Int64.self) }
        func decode(_ type: UInt.Type, forKey key: Key) throws -> UInt { try child(key).integer(UInt.self) }
        func decode(_ type: UInt8.Type, forKey key: Key) throws -> UInt8 { try child(key).integer(UInt8.self) }
        func decode(_ type: UInt16.Type, forKey key: Key) throws -> UInt16 { try child(key).integer(UInt16.self) }
        func decode(_ type: UInt32.Type, forKey key: Key) throws -> UInt32 { try child(key).integer(UInt32.self) }
        func decode(_ type: UInt64.Type, forKey key: Key) throws -> UInt64 { try child(key).integer(UInt64.self) }

        func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type, forKey key: Key) throws -> KeyedDecodingContainer<NestedKey> {
            try child(key).container(keyedBy: type)
        }
        func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer { try child(key).unkeyedContainer() }
        func superDecoder() throws -> any Decoder { throw document.fallback() }
        func superDecoder(forKey key: Key) throws -> any Decoder { throw document.fallback() }
    }

    /// An array's items, read in order.
    struct UnkeyedContainer: UnkeyedDecodingContainer {
        let document: Document
        let itemCount: Int
        private(set) var currentIndex = 0
        /// The node of the item at `currentIndex`.
        private var node: Int

        init(document: Document, array: Int) {
            self.document = document
            itemCount = document.nodes[array].count
            node = array + 1
        }

        var codingPath: [any CodingKey] { [] }
        var count: Int? { itemCount }
        var isAtEnd: Bool { currentIndex >= itemCount }

        private mutating func next() throws -> FastJSONDecoder {
            guard currentIndex < itemCount else { throw document.fallback() }
            defer {
                currentIndex += 1
                node = document.nodes[node].next
            }
            return FastJSONDecoder(document: document, index: node)
        }

        mutating func decodeNil() throws -> Bool {
            guard currentIndex < itemCount else { throw document.fallback() }
            guard document.nodes[node].kind == .null else { return false }
            currentIndex += 1
            node = document.nodes[node].next
            return true
        }

        mutating func decode<T: Decodable>(_ type: T.Type) throws -> T { try next().decode(T.self) }
        mutating func decode(_ type: Bool.Type) throws -> Bool { try next().decode(Bool.self) }
        mutating func decode(_ type: String.Type) throws -> String { try next().decode(String.self) }
        mutating func decode(_ type: Double.Type) throws -> Double { try next().decode(Double.self) }
        mutating func decode(_ type: Float.Type) throws -> Float { try next().decode(Float.self) }
        mutating func decode(_ type: Int.Type) throws -> Int { try next().integer(Int.self) }
        mutating func decode(_ type: Int8.Type) throws -> Int8 { try next().integer(Int8.self) }
        mutating func decode(_ type: Int16.Type) throws -> Int16 { try next().integer(Int16.self) }
        mutating func decode(_ type: Int32.Type) throws -> Int32 { try next().integer(Int32.self) }
        mutating func decode(_ type: Int64.Type) throws -> Int64 { try next().integer(Int64.self) }
        mutating func decode(_ type: UInt.Type) throws -> UInt { try next().integer(UInt.self) }
        mutating func decode(_ type: UInt8.Type) throws -> UInt8 { try next().integer(UInt8.self) }
        mutating func decode(_ type: UInt16.Type) throws -> UInt16 { try next().integer(UInt16.self) }
        mutating func decode(_ type: UInt32.Type) throws -> UInt32 { try next().integer(UInt32.self) }
        mutating func decode(_ type: UInt64.Type) throws -> UInt64 { try next().integer(UInt64.self) }

        mutating func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type) throws -> KeyedDecodingContainer<NestedKey> {
            try next().container(keyedBy: type)
        }
        mutating func nestedUnkeyedContainer() throws -> any UnkeyedDecodingContainer { try next().unkeyedContainer() }
        mutating func superDecoder() throws -> any Decoder { throw document.fallback() }
    }
}
