import Foundation

/// Encodes and decodes the envelope's JSON. The header is written and read by hand (it is on the
/// path of every message); the payload and error are embedded as JSON text.
public enum EnvelopeCodec {
    public static func encode(_ envelope: Envelope) -> Data {
        var writer = JSONWriter(capacity: 256 + (envelope.payload?.count ?? 0))
        writer.member("v", Int64(envelope.v))
        writer.member("id", uuid: envelope.id)
        writer.member("kind", envelope.kind.rawValue)
        writer.member("type", envelope.type)
        writer.member("correlationId", uuid: envelope.correlationId)
        writer.member("sentAt", date: envelope.sentAt)
        writer.member("deadline", date: envelope.deadline)
        writer.member("traceparent", envelope.traceparent)
        if let principal = envelope.principal {
            var nested = JSONWriter(capacity: 64)
            nested.member("kind", principal.kind.rawValue)
            nested.member("id", principal.id)
            writer.member("principal", rawJSON: nested.finish())
        }
        writer.member("idempotencyKey", envelope.idempotencyKey)
        writer.member("sequence", envelope.sequence)
        writer.member("payload", rawJSON: envelope.payload)
        if let error = envelope.error {
            writer.member("error", rawJSON: try? BusJSON.encoder().encode(error))
        }
        return writer.finish()
    }

    /// Decodes an envelope; anything malformed is an `invalid_argument` that says what and where.
    /// A newer protocol version still decodes (the caller answers it with an error reply).
    public static func decode(_ data: Data) throws(BusError) -> Envelope {
        var scanner = JSONScanner(data)
        do {
            let members = try scanner.topLevelMembers()
            var envelope = Envelope(kind: .request, type: "")
            var seen = Set<String>()
            for (key, range) in members {
                seen.insert(key)
                switch key {
                case "v": envelope.v = Int(try scanner.integer(at: range) ?? -1)
                case "id": envelope.id = try uuid(scanner, range, field: key)
                case "kind":
                    guard let kind = Envelope.Kind(rawValue: try scanner.string(at: range) ?? "") else {
                        throw BusError(.invalidArgument, "envelope kind must be request, reply or event")
                    }
                    envelope.kind = kind
                case "type": envelope.type = try scanner.string(at: range) ?? ""
                case "correlationId":
                    envelope.correlationId = scanner.isNull(range) ? nil : try uuid(scanner, range, field: key)
                case "sentAt": envelope.sentAt = try date(scanner, range, field: key) ?? envelope.sentAt
                case "deadline": envelope.deadline = try date(scanner, range, field: key)
                case "traceparent": envelope.traceparent = try scanner.string(at: range)
                case "principal": envelope.principal = try principal(scanner, range)
                case "idempotencyKey": envelope.idempotencyKey = try scanner.string(at: range)
                case "sequence": envelope.sequence = try scanner.integer(at: range)
                case "payload": envelope.payload = scanner.isNull(range) ? nil : scanner.slice(range)
                case "error":
                    if !scanner.isNull(range) {
                        envelope.error = (try? BusJSON.decoder().decode(BusError.self, from: scanner.slice(range)))
                            ?? BusError(.internal, "unreadable error from peer")
                    }
                default: continue  // unknown members are ignored
                }
            }
            for required in ["v", "id", "kind", "type"] where !seen.contains(required) {
                throw BusError(.invalidArgument, "envelope is missing \(required)")
            }
            guard !envelope.type.isEmpty else { throw BusError(.invalidArgument, "envelope type is empty") }
            return envelope
        } catch let error as JSONScanner.Malformed {
            throw BusError(.invalidArgument, "envelope is not valid JSON: \(error)")
        } catch let error as BusError {
            throw error
        } catch {
            throw BusError(.invalidArgument, "envelope could not be read: \(error)")
        }
    }

    /// UUIDs and timestamps never need JSON escapes: they are read straight from the bytes.
    private static func uuid(_ scanner: JSONScanner, _ range: Range<Int>, field: String) throws(BusError) -> UUID {
        guard let id = scanner.unquoted(range).flatMap({ MessageID.parse($0) }) else {
            throw BusError(.invalidArgument, "envelope \(field) must be a UUID")
        }
        return id
    }

    private static func date(_ scanner: JSONScanner, _ range: Range<Int>, field: String) throws(BusError) -> Date? {
        if scanner.isNull(range) { return nil }
        guard let date = scanner.unquoted(range).flatMap({ Timestamp.parse(bytes: Array($0)) }) else {
            throw BusError(.invalidArgument, "envelope \(field) must be an RFC 3339 timestamp")
        }
        return date
    }

    private static func principal(_ scanner: JSONScanner, _ range: Range<Int>) throws -> Principal? {
        if scanner.isNull(range) { return nil }
        var nested = JSONScanner(scanner.slice(range))
        var kind: Principal.Kind?
        var id: String?
        for (key, value) in try nested.topLevelMembers() {
            if key == "kind" { kind = try nested.string(at: value).flatMap(Principal.Kind.init(rawValue:)) }
            if key == "id" { id = try nested.string(at: value) }
        }
        guard let kind, let id else {
            throw BusError(.invalidArgument, "envelope principal needs a known kind and an id")
        }
        return Principal(kind, id)
    }
}
