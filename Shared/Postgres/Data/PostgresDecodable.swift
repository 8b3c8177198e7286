import Foundation

/// One value of a result row as the server sent it, in binary format. `bytes` is `nil` for
/// SQL `NULL` and is only valid during the `decode` call that receives it.
public struct PostgresCell {
    public let typeOID: UInt32
    public let bytes: UnsafeRawBufferPointer?
    public let columnName: String

    /// The bytes, or a decoding error naming the column when the value is `NULL`.
    public func nonNull<T>(_ type: T.Type) throws -> UnsafeRawBufferPointer {
        guard let bytes else {
            throw PostgresError.decoding(
                "column \"\(columnName)\" is NULL; decode \(T.self)? instead", column: columnName)
        }
        return bytes
    }

    /// A decoding error for a value of an unexpected type or shape.
    public func mismatch<T>(_ type: T.Type) -> PostgresError {
        PostgresError.decoding(
            "cannot decode column \"\(columnName)\" (type OID \(typeOID), \(bytes?.count ?? 0) bytes)"
                + " as \(T.self)", column: columnName)
    }

    func bigEndian<I: FixedWidthInteger>(_ type: I.Type, _ bytes: UnsafeRawBufferPointer) -> I {
        var value = I.zero
        for byte in bytes.prefix(MemoryLayout<I>.size) { value = value << 8 | I(truncatingIfNeeded: byte) }
        return value
    }

    /// The value of an `int2`/`int4`/`int8`/`oid` column, widened to `Int64`.
    func integer<T>(_ type: T.Type) throws -> Int64 {
        let bytes = try nonNull(T.self)
        switch (typeOID, bytes.count) {
        case (PostgresTypeOID.int2, 2): return Int64(bigEndian(Int16.self, bytes))
        case (PostgresTypeOID.int4, 4): return Int64(bigEndian(Int32.self, bytes))
        case (PostgresTypeOID.oid, 4): return Int64(bigEndian(UInt32.self, bytes))
        case (PostgresTypeOID.int8, 8): return bigEndian(Int64.self, bytes)
        default: throw mismatch(T.self)
        }
    }
}

/// A Swift type a result column can be decoded into. `Optional` of a decodable type decodes
/// `NULL` as `nil`; the non-optional type throws on `NULL`.
public protocol PostgresDecodable: Sendable {
    static func decode(from cell: PostgresCell) throws -> Self
}

extension Optional: PostgresDecodable where Wrapped: PostgresDecodable {
    public static func decode(from cell: PostgresCell) throws -> Self {
        cell.bytes == nil ? nil : try Wrapped.decode(from: cell)
    }
}

extension String: PostgresDecodable {
    /// Text-like types (`text`, `varchar`, `name`, `json`, enums, `citext`…) and `jsonb`. Other
    /// types (numbers, `uuid`…) have a binary form that is not text: cast them with `::text`.
    public static func decode(from cell: PostgresCell) throws -> String {
        let bytes = try cell.nonNull(String.self)
        if cell.typeOID == PostgresTypeOID.jsonb {
            guard bytes.first == 1 else { throw cell.mismatch(String.self) }
            return String(decoding: bytes.dropFirst(), as: UTF8.self)
        }
        guard !PostgresTypeOID.nonTextual.contains(cell.typeOID) else { throw cell.mismatch(String.self) }
        return String(decoding: bytes, as: UTF8.self)
    }
}

extension Int: PostgresDecodable {
    public static func decode(from cell: PostgresCell) throws -> Int {
        Int(try cell.integer(Int.self))
    }
}

extension Int64: PostgresDecodable {
    public static func decode(from cell: PostgresCell) throws -> Int64 {
        try cell.integer(Int64.self)
    }
}

extension Int32: PostgresDecodable {
    /// `int2` and `int4`, and `int8` values that fit.
    public static func decode(from cell: PostgresCell) throws -> Int32 {
        guard let value = Int32(exactly: try cell.integer(Int32.self)) else { throw cell.mismatch(Int32.self) }
        return value
    }
}

extension Int16: PostgresDecodable {
    /// `int2`, and `int4`/`int8` values that fit.
    public static func decode(from cell: PostgresCell) throws -> Int16 {
        guard let value = Int16(exactly: try cell.integer(Int16.self)) else { throw cell.mismatch(Int16.self) }
        return value
    }
}

extension Bool: PostgresDecodable {
    public static func decode(from cell: PostgresCell) throws -> Bool {
        let bytes = try cell.nonNull(Bool.self)
        guard cell.typeOID == PostgresTypeOID.bool, bytes.count == 1 else { throw cell.mismatch(Bool.self) }
        return bytes[0] != 0
    }
}

extension Double: PostgresDecodable {
    /// `float8`, `float4`, and integer columns (exact up to 2^53).
    public static func decode(from cell: PostgresCell) throws -> Double {
        let bytes = try cell.nonNull(Double.self)
        switch (cell.typeOID, bytes.count) {
        case (PostgresTypeOID.float8, 8): return Double(bitPattern: cell.bigEndian(UInt64.self, bytes))
        case (PostgresTypeOID.float4, 4): return Double(Float(bitPattern: cell.bigEndian(UInt32.self, bytes)))
        default: return Double(try cell.integer(Double.self))
        }
    }
}

extension UUID: PostgresDecodable {
    public static func decode(from cell: PostgresCell) throws -> UUID {
        let b = try cell.nonNull(UUID.self)
        guard cell.typeOID == PostgresTypeOID.uuid, b.count == 16 else { throw cell.mismatch(UUID.self) }
        return UUID(
            uuid: (
                b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7],
                b[8], b[9], b[10], b[11], b[12], b[13], b[14], b[15]
            ))
    }
}

extension Date: PostgresDecodable {
    /// `timestamptz` (and `timestamp`, read as UTC), to the microsecond. `±infinity` is
    /// `Date.distantFuture` / `Date.distantPast`.
    public static func decode(from cell: PostgresCell) throws -> Date {
        let bytes = try cell.nonNull(Date.self)
        guard cell.typeOID == PostgresTypeOID.timestamptz || cell.typeOID == PostgresTypeOID.timestamp,
            bytes.count == 8
        else { throw cell.mismatch(Date.self) }
        let micros = cell.bigEndian(Int64.self, bytes)
        if micros == .max { return .distantFuture }
        if micros == .min { return .distantPast }
        return PostgresTimestamp.date(microsecondsSince2000: micros)
    }
}

extension Array: PostgresDecodable where Element == UInt8 {
    /// `bytea`.
    public static func decode(from cell: PostgresCell) throws -> [UInt8] {
        let bytes = try cell.nonNull([UInt8].self)
        guard cell.typeOID == PostgresTypeOID.bytea else { throw cell.mismatch([UInt8].self) }
        return [UInt8](bytes)
    }
}

extension Data: PostgresDecodable {
    /// `bytea`.
    public static func decode(from cell: PostgresCell) throws -> Data {
        Data(try [UInt8].decode(from: cell))
    }
}
