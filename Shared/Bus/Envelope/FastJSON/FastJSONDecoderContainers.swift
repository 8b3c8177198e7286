import Foundation

extension FastJSONDecoder {
    /// An object's members; lookups scan them (payload objects are small, and a scan of a few
    /// short keys is cheaper than building a dictionary per object).
    struct KeyedContainer<Key: CodingKey>: KeyedDecodingContainerProtocol {
        let bytes: UnsafeBufferPointer<UInt8>
        let members: [FastJSONMember]
        let run: Run

        var codingPath: [any CodingKey] { [] }
        var allKeys: [Key] { members.compactMap { Key(stringValue: $0.key) } }

        private func value(_ key: Key) -> FastJSONValue? {
            let name = key.stringValue
            for member in members where member.key == name { return member.value }
            return nil
        }

        /// The member as a decoder; a missing key falls back (Foundation names it in its error).
        private func child(_ key: Key) throws -> FastJSONDecoder {
            guard let value = value(key) else { throw run.fallback() }
            return FastJSONDecoder(bytes: bytes, value: value, run: run)
        }

        func contains(_ key: Key) -> Bool { value(key) != nil }

        func decodeNil(forKey key: Key) throws -> Bool { try child(key).decodeNil() }

        func decodeIfPresent<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T? {
            guard let value = value(key) else { return nil }
            let child = FastJSONDecoder(bytes: bytes, value: value, run: run)
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
        func superDecoder() throws -> any Decoder { throw run.fallback() }
        func superDecoder(forKey key: Key) throws -> any Decoder { throw run.fallback() }
    }

    /// An array's items, read in order.
    struct UnkeyedContainer: UnkeyedDecodingContainer {
        let bytes: UnsafeBufferPointer<UInt8>
        let items: [FastJSONValue]
        let run: Run
        private(set) var currentIndex = 0

        init(bytes: UnsafeBufferPointer<UInt8>, items: [FastJSONValue], run: Run) {
            self.bytes = bytes
            self.items = items
            self.run = run
        }

        var codingPath: [any CodingKey] { [] }
        var count: Int? { items.count }
        var isAtEnd: Bool { currentIndex >= items.count }

        private mutating func next() throws -> FastJSONDecoder {
            guard currentIndex < items.count else { throw run.fallback() }
            defer { currentIndex += 1 }
            return FastJSONDecoder(bytes: bytes, value: items[currentIndex], run: run)
        }

        mutating func decodeNil() throws -> Bool {
            guard currentIndex < items.count else { throw run.fallback() }
            guard case .null = items[currentIndex] else { return false }
            currentIndex += 1
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
        mutating func superDecoder() throws -> any Decoder { throw run.fallback() }
    }
}
