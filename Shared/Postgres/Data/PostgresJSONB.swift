import Foundation

/// A `jsonb` (or `json`) value as its UTF-8 JSON text, with `Codable` conveniences.
///
/// Kept as raw bytes so callers that only pass JSON through never parse it.
public struct PostgresJSONB: Sendable, Hashable, PostgresEncodable, PostgresDecodable {
    /// The JSON text, UTF-8.
    public var bytes: [UInt8]

    public init(bytes: [UInt8]) { self.bytes = bytes }
    public init(_ text: String) { self.bytes = Array(text.utf8) }

    /// Encodes `value` with `encoder` (a default `JSONEncoder` unless given).
    public init(encoding value: some Encodable, encoder: JSONEncoder = JSONEncoder()) throws {
        self.bytes = [UInt8](try encoder.encode(value))
    }

    /// Decodes the JSON into `type`.
    public func decode<T: Decodable>(_ type: T.Type, decoder: JSONDecoder = JSONDecoder()) throws -> T {
        try decoder.decode(type, from: Data(bytes))
    }

    public var text: String { String(decoding: bytes, as: UTF8.self) }

    public var postgresParameter: PostgresParameter {
        PostgresParameter(typeOID: PostgresTypeOID.jsonb, format: .text, bytes: bytes)
    }

    public static func decode(from cell: PostgresCell) throws -> PostgresJSONB {
        let bytes = try cell.nonNull(PostgresJSONB.self)
        switch cell.typeOID {
        case PostgresTypeOID.jsonb:
            guard bytes.first == 1 else { throw cell.mismatch(PostgresJSONB.self) }
            return PostgresJSONB(bytes: [UInt8](bytes.dropFirst()))
        case PostgresTypeOID.json, PostgresTypeOID.text, PostgresTypeOID.varchar:
            return PostgresJSONB(bytes: [UInt8](bytes))
        default: throw cell.mismatch(PostgresJSONB.self)
        }
    }
}
