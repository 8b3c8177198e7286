import Foundation

/// A `Decoder` over a parsed ``FastJSONValue``, for payloads. Foundation's `JSONDecoder` was the
/// largest single cost of a round trip (about 15% of CPU: coding-path bookkeeping, boxed
/// containers, a dictionary per object). This one decodes the common shapes (objects, arrays,
/// strings, numbers, booleans, `Date` as ``Timestamp``) and throws ``FastJSONFallback`` for
/// anything else or any error, so that ``BusJSON`` re-runs Foundation and its result (or error
/// message, naming the field) is the one the caller sees.
struct FastJSONDecoder: Decoder {
    let bytes: UnsafeBufferPointer<UInt8>
    let value: FastJSONValue
    let run: Run

    /// One decode. A `Decodable` may catch an error and try another reading (`try?`); had
    /// Foundation accepted the first, the results would differ. So every fallback is recorded
    /// here, and a decode that raised one is redone by Foundation even if it then succeeded.
    final class Run {
        var fellBack = false

        func fallback() -> FastJSONFallback {
            fellBack = true
            return FastJSONFallback()
        }
    }

    var codingPath: [any CodingKey] { [] }
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    /// Decodes `T` from `data`, or throws ``FastJSONFallback``.
    static func decode<T: Decodable>(_ type: T.Type, from data: Data) throws(FastJSONFallback) -> T {
        do {
            return try data.withUnsafeBytes { raw in
                let bytes = raw.bindMemory(to: UInt8.self)
                var parser = FastJSONParser(bytes)
                let run = Run()
                let value = try FastJSONDecoder(bytes: bytes, value: try parser.parseDocument(), run: run).decode(T.self)
                if run.fellBack { throw FastJSONFallback() }
                return value
            }
        } catch {
            throw FastJSONFallback()
        }
    }

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        guard case .object(let members) = value else { throw run.fallback() }
        return KeyedDecodingContainer(KeyedContainer(bytes: bytes, members: members, run: run))
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
        guard case .array(let items) = value else { throw run.fallback() }
        return UnkeyedContainer(bytes: bytes, items: items, run: run)
    }

    func singleValueContainer() throws -> any SingleValueDecodingContainer { self }

    // MARK: Scalars

    func decode<T: Decodable>(_ type: T.Type) throws -> T {
        // Types Foundation's decoder treats specially: Date by BusJSON's strategy, the rest left to it.
        if T.self == Date.self {
            guard case .string(let range, false) = value,
                let date = Timestamp.parse(buffer: UnsafeBufferPointer(rebasing: bytes[range]))
            else { throw run.fallback() }
            return date as! T
        }
        if T.self == Data.self || T.self == URL.self || T.self == Decimal.self { throw run.fallback() }
        return try T(from: self)
    }

    func decodeNil() -> Bool { if case .null = value { true } else { false } }

    func decode(_ type: Bool.Type) throws -> Bool {
        guard case .bool(let flag) = value else { throw run.fallback() }
        return flag
    }

    func decode(_ type: String.Type) throws -> String {
        guard case .string(let range, let escaped) = value else { throw run.fallback() }
        return try FastJSONValue.text(bytes, range, escaped: escaped)
    }

    /// Plain integers only (`-?digits`); `1.0` or `1e2`, which Foundation also takes, fall back.
    func integer<T: FixedWidthInteger>(_ type: T.Type) throws -> T {
        guard case .number(let range) = value else { throw run.fallback() }
        var index = range.lowerBound
        let negative = bytes[index] == UInt8(ascii: "-")
        if negative { index += 1 }
        var magnitude: UInt64 = 0
        while index < range.upperBound {
            let digit = bytes[index] &- UInt8(ascii: "0")
            guard digit < 10 else { throw run.fallback() }
            let (times10, o1) = magnitude.multipliedReportingOverflow(by: 10)
            let (next, o2) = times10.addingReportingOverflow(UInt64(digit))
            guard !o1, !o2 else { throw run.fallback() }
            magnitude = next
            index += 1
        }
        if negative {
            guard magnitude <= UInt64(Int64.max) + 1 else { throw run.fallback() }
            let signed = magnitude == UInt64(Int64.max) + 1 ? Int64.min : -Int64(magnitude)
            guard let exact = T(exactly: signed) else { throw run.fallback() }
            return exact
        }
        guard let exact = T(exactly: magnitude) else { throw run.fallback() }
        return exact
    }

    func double() throws -> Double {
        guard case .number(let range) = value,
            let number = Double(String(decoding: UnsafeBufferPointer(rebasing: bytes[range]), as: UTF8.self)),
            number.isFinite
        else { throw run.fallback() }
        return number
    }

    func decode(_ type: Double.Type) throws -> Double { try double() }
    /// Left to Foundation: converting through `Double` could round differently from its parse.
    func decode(_ type: Float.Type) throws -> Float { throw run.fallback() }
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
