import Foundation
import Hex

/// One bound parameter as libpq sends it: a type OID (0 lets the server infer it), a format,
/// and the bytes.
public struct PostgresParameter: Sendable, Equatable {
    public enum Format: Int32, Sendable {
        case text = 0
        case binary = 1
    }
    public var typeOID: UInt32
    public var format: Format
    public var bytes: [UInt8]

    public init(typeOID: UInt32, format: Format, bytes: [UInt8]) {
        self.typeOID = typeOID
        self.format = format
        self.bytes = bytes
    }

    /// A text-format parameter.
    public init(text: String, typeOID: UInt32 = PostgresTypeOID.unspecified) {
        self.init(typeOID: typeOID, format: .text, bytes: Array(text.utf8))
    }
}

/// A Swift value that can be bound to a `$n` parameter.
///
/// Parameters travel in PostgreSQL's text format (bytea in binary), which the server converts to
/// whatever type the statement needs, so `Int` works for `int4` and `int8` columns alike and
/// prepared statements (whose types the server infers) accept them too. Types that say which
/// OID they are (`Int` → `int8`, `UUID` → `uuid`…) make `SELECT $1` come back typed; `String`
/// leaves the type to the server so it can feed `jsonb`, `inet` or enum columns.
public protocol PostgresEncodable: Sendable {
    var postgresParameter: PostgresParameter { get }
}

extension String: PostgresEncodable {
    public var postgresParameter: PostgresParameter { PostgresParameter(text: self) }
}

extension Substring: PostgresEncodable {
    public var postgresParameter: PostgresParameter { PostgresParameter(text: String(self)) }
}

extension Int: PostgresEncodable {
    public var postgresParameter: PostgresParameter {
        PostgresParameter(text: String(self), typeOID: PostgresTypeOID.int8)
    }
}

extension Int64: PostgresEncodable {
    public var postgresParameter: PostgresParameter {
        PostgresParameter(text: String(self), typeOID: PostgresTypeOID.int8)
    }
}

extension Int32: PostgresEncodable {
    public var postgresParameter: PostgresParameter {
        PostgresParameter(text: String(self), typeOID: PostgresTypeOID.int4)
    }
}

extension Int16: PostgresEncodable {
    public var postgresParameter: PostgresParameter {
        PostgresParameter(text: String(self), typeOID: PostgresTypeOID.int2)
    }
}

extension Bool: PostgresEncodable {
    public var postgresParameter: PostgresParameter {
        PostgresParameter(text: self ? "t" : "f", typeOID: PostgresTypeOID.bool)
    }
}

extension Double: PostgresEncodable {
    /// Swift's `description` is the shortest text that round-trips, which `float8in` parses.
    public var postgresParameter: PostgresParameter {
        let text: String
        if isNaN {
            text = "NaN"
        } else if isInfinite {
            text = self < 0 ? "-Infinity" : "Infinity"
        } else {
            text = description
        }
        return PostgresParameter(text: text, typeOID: PostgresTypeOID.float8)
    }
}

extension UUID: PostgresEncodable {
    public var postgresParameter: PostgresParameter {
        PostgresParameter(text: Hex.uuid(self, uppercase: true), typeOID: PostgresTypeOID.uuid)  // uuidString's text, without its sprintf
    }
}

extension Date: PostgresEncodable {
    /// ISO 8601 in UTC with microseconds: `timestamptz`'s own precision.
    public var postgresParameter: PostgresParameter {
        PostgresParameter(text: PostgresTimestamp.iso8601(self), typeOID: PostgresTypeOID.timestamptz)
    }
}

extension Array: PostgresEncodable where Element == UInt8 {
    /// `bytea`, sent in binary: no hex or escape encoding on either side.
    public var postgresParameter: PostgresParameter {
        PostgresParameter(typeOID: PostgresTypeOID.bytea, format: .binary, bytes: self)
    }
}

extension Data: PostgresEncodable {
    public var postgresParameter: PostgresParameter { [UInt8](self).postgresParameter }
}
