import Foundation

/// The JSON coders for payloads, configured once so every service encodes dates and keys alike:
/// dates are RFC 3339 with milliseconds (``Timestamp``), keys as the Contracts types spell them.
public enum BusJSON {
    /// Shared coders: configuring one per message showed up in profiles. Foundation's coders are
    /// `Sendable` and safe to use from many tasks at once.
    static let sharedEncoder = encoder()
    static let sharedDecoder = decoder()

    public static func encoder() -> JSONEncoder {
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .custom { date, encoder in
            var container = encoder.singleValueContainer()
            try container.encode(Timestamp.format(date))
        }
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return encoder
    }

    public static func decoder() -> JSONDecoder {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .custom { decoder in
            let container = try decoder.singleValueContainer()
            let text = try container.decode(String.self)
            guard let date = Timestamp.parse(text) else {
                throw DecodingError.dataCorruptedError(
                    in: container, debugDescription: "expected an RFC 3339 timestamp, got \"\(text)\"")
            }
            return date
        }
        return decoder
    }

    /// Encodes with ``FastJSONEncoder`` and, for whatever it does not handle (or any error), with
    /// Foundation's encoder, whose bytes or error then stand. Both write the same bytes.
    public static func encode<T: Encodable>(_ value: T) throws(BusError) -> Data {
        if let data = try? FastJSONEncoder.encode(value) { return data }
        do { return try sharedEncoder.encode(value) } catch {
            throw BusError(.internal, "could not encode \(T.self): \(error)")
        }
    }

    /// The JSON as a byte array, for the envelope encoder (no `Data` allocated and copied).
    package static func encodeBytes<T: Encodable>(_ value: T) throws(BusError) -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(256)
        try encode(value, appendingTo: &bytes)
        return bytes
    }

    /// The same, appended to `buffer`.
    static func encode<T: Encodable>(_ value: T, appendingTo buffer: inout [UInt8]) throws(BusError) {
        do throws(FastJSONFallback) {
            return try FastJSONEncoder.encode(value, appendingTo: &buffer)
        } catch {}
        do { buffer.append(contentsOf: try sharedEncoder.encode(value)) } catch {
            throw BusError(.internal, "could not encode \(T.self): \(error)")
        }
    }

    /// Decodes with ``FastJSONDecoder`` and, for whatever it does not handle (or any error), with
    /// Foundation's decoder, whose value or error then stands.
    public static func decode<T: Decodable>(_ type: T.Type, from data: Data) throws -> T {
        if let value = try? FastJSONDecoder.decode(type, from: data) { return value }
        return try sharedDecoder.decode(type, from: data)
    }

    /// Whether ``FastJSONEncoder`` and ``FastJSONDecoder`` both handle `value` themselves, with no
    /// fallback to Foundation (`bus-bench codecs` says so beside its figures).
    package static func fastPathHandles<T: Codable>(_ value: T) -> Bool {
        guard let data = try? FastJSONEncoder.encode(value) else { return false }
        return (try? FastJSONDecoder.decode(T.self, from: data)) != nil
    }

    /// A one-line account of a decoding failure that names the offending field by its dotted path
    /// (`missing field items.0.userId`, `expected String at version`): the one wording of a bad
    /// payload on the bus and of a bad request body at the gateway.
    public static func describe(_ error: any Error) -> String {
        guard let error = error as? DecodingError else { return "\(error)" }
        func dotted(_ path: [any CodingKey]) -> String { path.map { $0.intValue.map(String.init) ?? $0.stringValue }.joined(separator: ".") }
        func path(_ context: DecodingError.Context) -> String {
            let path = dotted(context.codingPath)
            return path.isEmpty ? "" : " at \(path)"
        }
        switch error {
        case .keyNotFound(let key, let context): return "missing field \(dotted(context.codingPath + [key]))"
        case .typeMismatch(let type, let context): return "expected \(type)\(path(context))"
        case .valueNotFound(let type, let context): return "missing \(type) value\(path(context))"
        case .dataCorrupted(let context): return "\(context.debugDescription)\(path(context))"
        @unknown default: return "\(error)"
        }
    }
}
