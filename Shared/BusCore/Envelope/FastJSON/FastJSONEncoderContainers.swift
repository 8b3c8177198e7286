import Foundation

extension FastJSONEncoder {
    /// A handle on an object in the buffer; every write checks it is still open (see
    /// ``FastJSONEncoderState``). Scalars are written in place, other values through
    /// ``FastJSONEncoderState/encodeValue(_:)``.
    struct KeyedContainer<Key: CodingKey>: KeyedEncodingContainerProtocol {
        let state: FastJSONEncoderState
        let index: Int
        let token: Int

        var codingPath: [any CodingKey] {
            state.fail()
            return []
        }

        private func begin(_ key: Key) throws(FastJSONFallback) { try state.beginMember(index, token, key: key.stringValue) }

        mutating func encodeNil(forKey key: Key) throws {
            try begin(key)
            state.appendASCII("null")
        }
        mutating func encode(_ value: Bool, forKey key: Key) throws {
            try begin(key)
            state.append(value)
        }
        mutating func encode(_ value: String, forKey key: Key) throws {
            try begin(key)
            state.append(value)
        }
        mutating func encode(_ value: Double, forKey key: Key) throws {
            try begin(key)
            try state.append(value)
        }
        mutating func encode(_ value: Float, forKey key: Key) throws {
            try begin(key)
            try state.append(value)
        }
        mutating func encode(_ value: Int, forKey key: Key) throws {
            try begin(key)
            state.append(Int64(value))
        }
        mutating func encode(_ value: Int8, forKey key: Key) throws {
            try begin(key)
            state.append(Int64(value))
        }
        mutating func encode(_ value: Int16, forKey key: Key) throws {
            try begin(key)
            state.append(Int64(value))
        }
        mutating func encode(_ value: Int32, forKey key: Key) throws {
            try begin(key)
            state.append(Int64(value))
        }
        mutating func encode(_ value: Int64, forKey key: Key) throws {
            try begin(key)
            state.append(value)
        }
        mutating func encode(_ value: UInt, forKey key: Key) throws {
            try begin(key)
            state.append(UInt64(value))
        }
        mutating func encode(_ value: UInt8, forKey key: Key) throws {
            try begin(key)
            state.append(UInt64(value))
        }
        mutating func encode(_ value: UInt16, forKey key: Key) throws {
            try begin(key)
            state.append(UInt64(value))
        }
        mutating func encode(_ value: UInt32, forKey key: Key) throws {
            try begin(key)
            state.append(UInt64(value))
        }
        mutating func encode(_ value: UInt64, forKey key: Key) throws {
            try begin(key)
            state.append(value)
        }
        mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws {
            try begin(key)
            try state.encodeValue(value)
        }

        mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type, forKey key: Key) -> KeyedEncodingContainer<NestedKey> {
            let (index, token) = open(object: true, key)
            return KeyedEncodingContainer(KeyedContainer<NestedKey>(state: state, index: index, token: token))
        }

        mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
            let (index, token) = open(object: false, key)
            return UnkeyedContainer(state: state, index: index, token: token)
        }

        private func open(object: Bool, _ key: Key) -> (index: Int, token: Int) {
            do { try begin(key) } catch { return (-1, -1) }
            return state.openContainer(object: object, depth: index + 1, mark: state.bytes.count, owner: state.newToken())
        }

        /// Super encoders write into their container when released: left to Foundation.
        mutating func superEncoder() -> any Encoder { fallbackEncoder() }
        mutating func superEncoder(forKey key: Key) -> any Encoder { fallbackEncoder() }

        private func fallbackEncoder() -> any Encoder {
            state.fail()
            return FastJSONEncoder(state: state, depth: -1, mark: -1, owner: -1)
        }
    }

    /// A handle on an array in the buffer.
    struct UnkeyedContainer: UnkeyedEncodingContainer {
        let state: FastJSONEncoderState
        let index: Int
        let token: Int

        var codingPath: [any CodingKey] {
            state.fail()
            return []
        }
        var count: Int { state.count(index, token) }

        private func begin() throws(FastJSONFallback) { try state.beginElement(index, token) }

        mutating func encodeNil() throws {
            try begin()
            state.appendASCII("null")
        }
        mutating func encode(_ value: Bool) throws {
            try begin()
            state.append(value)
        }
        mutating func encode(_ value: String) throws {
            try begin()
            state.append(value)
        }
        mutating func encode(_ value: Double) throws {
            try begin()
            try state.append(value)
        }
        mutating func encode(_ value: Float) throws {
            try begin()
            try state.append(value)
        }
        mutating func encode(_ value: Int) throws {
            try begin()
            state.append(Int64(value))
        }
        mutating func encode(_ value: Int8) throws {
            try begin()
            state.append(Int64(value))
        }
        mutating func encode(_ value: Int16) throws {
            try begin()
            state.append(Int64(value))
        }
        mutating func encode(_ value: Int32) throws {
            try begin()
            state.append(Int64(value))
        }
        mutating func encode(_ value: Int64) throws {
            try begin()
            state.append(value)
        }
        mutating func encode(_ value: UInt) throws {
            try begin()
            state.append(UInt64(value))
        }
        mutating func encode(_ value: UInt8) throws {
            try begin()
            state.append(UInt64(value))
        }
        mutating func encode(_ value: UInt16) throws {
            try begin()
            state.append(UInt64(value))
        }
        mutating func encode(_ value: UInt32) throws {
            try begin()
            state.append(UInt64(value))
        }
        mutating func encode(_ value: UInt64) throws {
            try begin()
            state.append(value)
        }
        mutating func encode<T: Encodable>(_ value: T) throws {
            try begin()
            try state.encodeValue(value)
        }

        mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type) -> KeyedEncodingContainer<NestedKey> {
            let (index, token) = open(object: true)
            return KeyedEncodingContainer(KeyedContainer<NestedKey>(state: state, index: index, token: token))
        }

        mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer {
            let (index, token) = open(object: false)
            return UnkeyedContainer(state: state, index: index, token: token)
        }

        private func open(object: Bool) -> (index: Int, token: Int) {
            do { try begin() } catch { return (-1, -1) }
            return state.openContainer(object: object, depth: index + 1, mark: state.bytes.count, owner: state.newToken())
        }

        mutating func superEncoder() -> any Encoder {
            state.fail()
            return FastJSONEncoder(state: state, depth: -1, mark: -1, owner: -1)
        }
    }
}
