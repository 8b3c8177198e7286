import Foundation

/// A JSON value written by hand: the gateway's bodies (errors, the seed's shapes, OpenAPI) and
/// the rows a PostgREST query runs over in memory (RestQueryKit's `InMemoryTable`).
public indirect enum JSONValue: Sendable, Equatable, Encodable {
    case string(String)
    case number(Double)
    case int(Int64)
    case bool(Bool)
    case null
    case array([JSONValue])
    case object([String: JSONValue])

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .string(let value): try container.encode(value)
        case .number(let value): try container.encode(value)
        case .int(let value): try container.encode(value)
        case .bool(let value): try container.encode(value)
        case .null: try container.encodeNil()
        case .array(let value): try container.encode(value)
        case .object(let value): try container.encode(value)
        }
    }
}
