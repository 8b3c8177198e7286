import Foundation

/// An `Encoder` that writes payload JSON straight into one byte buffer, byte for byte what
/// ``BusJSON/encoder()`` (Foundation's `JSONEncoder`, sorted keys, unescaped slashes) writes.
/// Foundation's encoder cost about 6.4 µs per payload, two per call (12% of a call's CPU):
/// a boxed value tree, a dictionary per object and coding-path bookkeeping. This one appends
/// each value as it is encoded and sorts an object's members when it closes.
///
/// Whatever it does not reproduce exactly (`Decimal`, super encoders, a key written twice,
/// a container written to after a sibling's, a look at `codingPath`, non-finite floats, any
/// error) makes the whole value fall back: ``BusJSON`` then runs Foundation, whose bytes or
/// error stand. Tests compare both on many types.
struct FastJSONEncoder: Encoder {
    let state: FastJSONEncoderState
    /// The number of open containers when this value began: its own container, if it opens
    /// one, sits at this index of the frame stack.
    let depth: Int
    /// Where this value's bytes begin.
    let mark: Int
    /// Identifies this value, so a second `container(keyedBy:)` call reuses the first container.
    let owner: Int

    /// Asking for the path falls back: this encoder does not track it, and a type whose output
    /// depends on it must get Foundation's.
    var codingPath: [any CodingKey] {
        state.fail()
        return []
    }
    /// Empty, as in ``BusJSON/encoder()``.
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    /// Encodes `value`, or throws ``FastJSONFallback``.
    static func encode<T: Encodable>(_ value: T) throws(FastJSONFallback) -> Data {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(256)
        try encode(value, appendingTo: &bytes)
        return Data(bytes)
    }

    /// Appends the JSON of `value` to `buffer` (an envelope's bytes, say, so the payload is not
    /// copied again), or throws ``FastJSONFallback`` with `buffer` as it was. Runs on this
    /// thread's reusable state: no buffers allocated per value once the thread has encoded one.
    static func encode<T: Encodable>(_ value: T, appendingTo buffer: inout [UInt8]) throws(FastJSONFallback) {
        // A payload with its own coder (the acceptance path's batches) writes itself; should it
        // throw, the generic path below runs.
        if let value = value as? any HandEncodedJSON, (try? value.appendJSON(to: &buffer)) != nil { return }
        try encodeThroughEncodable(value, appendingTo: &buffer)
    }

    /// The same through `value`'s `Encodable` conformance, whatever it is.
    static func encodeThroughEncodable<T: Encodable>(_ value: T, appendingTo buffer: inout [UInt8]) throws(FastJSONFallback) {
        let state = FastJSONEncoderState.borrow()
        defer { state.giveBack() }
        let base = buffer.count
        state.begin(in: &buffer)
        do {
            try state.encodeValue(value)
        } catch {
            state.end(in: &buffer, keepingFrom: base, ok: false)
            throw FastJSONFallback()
        }
        // Foundation refuses a top-level value that encoded nothing; `failed` catches errors a
        // type swallowed with `try?` after this encoder had already given up.
        let ok = !state.failed && state.bytes.count > base && state.frames.isEmpty
        state.end(in: &buffer, keepingFrom: base, ok: ok)
        if !ok { throw FastJSONFallback() }
    }

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        let (index, token) = state.openContainer(object: true, depth: depth, mark: mark, owner: owner)
        return KeyedEncodingContainer(KeyedContainer(state: state, index: index, token: token))
    }

    func unkeyedContainer() -> any UnkeyedEncodingContainer {
        let (index, token) = state.openContainer(object: false, depth: depth, mark: mark, owner: owner)
        return UnkeyedContainer(state: state, index: index, token: token)
    }

    func singleValueContainer() -> any SingleValueEncodingContainer { self }
}

extension FastJSONEncoder: SingleValueEncodingContainer {
    /// A single value is allowed only while nothing else has been written for this value.
    private func begin() throws(FastJSONFallback) {
        guard !state.failed, state.frames.count == depth, state.bytes.count == mark else { throw state.fallback() }
    }

    func encodeNil() throws {
        try begin()
        state.appendASCII("null")
    }
    func encode(_ value: Bool) throws {
        try begin()
        state.append(value)
    }
    func encode(_ value: String) throws {
        try begin()
        state.append(value)
    }
    func encode(_ value: Double) throws {
        try begin()
        try state.append(value)
    }
    func encode(_ value: Float) throws {
        try begin()
        try state.append(value)
    }
    func encode(_ value: Int) throws {
        try begin()
        state.append(Int64(value))
    }
    func encode(_ value: Int8) throws {
        try begin()
        state.append(Int64(value))
    }
    func encode(_ value: Int16) throws {
        try begin()
        state.append(Int64(value))
    }
    func encode(_ value: Int32) throws {
        try begin()
        state.append(Int64(value))
    }
    func encode(_ value: Int64) throws {
        try begin()
        state.append(value)
    }
    func encode(_ value: UInt) throws {
        try begin()
        state.append(UInt64(value))
    }
    func encode(_ value: UInt8) throws {
        try begin()
        state.append(UInt64(value))
    }
    func encode(_ value: UInt16) throws {
        try begin()
        state.append(UInt64(value))
    }
    func encode(_ value: UInt32) throws {
        try begin()
        state.append(UInt64(value))
    }
    func encode(_ value: UInt64) throws {
        try begin()
        state.append(value)
    }
    func encode<T: Encodable>(_ value: T) throws {
        try begin()
        try state.encodeValue(value)
    }
}
