import Foundation

/// Encodes and decodes envelopes. Every peer writes the binary form (``BinaryEnvelope``); the JSON
/// form that peers wrote before it is only read (the first byte tells them apart), as the old
/// frame layout is: stored dead letters may hold it. Nothing writes it any more; tests and the
/// fuzz corpus spell it as literals.
public enum EnvelopeCodec {
    /// The envelope's wire bytes (binary form).
    public static func encode(_ envelope: Envelope) -> Data { Data(BinaryEnvelope.encode(envelope)) }

    /// The same bytes as an array: what the sockets send, without a `Data` box around them;
    /// `payload`, when given, stands for the envelope's.
    package static func encodeBytes(_ envelope: Envelope, payload: [UInt8]? = nil) -> [UInt8] {
        BinaryEnvelope.encode(envelope, payload: payload)
    }

    /// Decodes either form; anything malformed is an `invalid_argument` that says what and where.
    /// A newer protocol version still decodes (the caller answers it with an error reply).
    public static func decode(_ data: Data) throws(BusError) -> Envelope {
        if data.first == BinaryEnvelope.marker {
            // `Data.withUnsafeBytes` rethrows untyped errors: carry the typed one out in a Result.
            return try data.withUnsafeBytes { bytes in Result { () throws(BusError) in try BinaryEnvelope.decode(bytes) } }.get()
        }
        return try decodeJSON(data)
    }

    /// Decodes either form from borrowed bytes (a received frame, read in place).
    package static func decode(_ bytes: UnsafeRawBufferPointer) throws(BusError) -> Envelope {
        if bytes.first == BinaryEnvelope.marker { return try BinaryEnvelope.decode(bytes) }
        return try decodeJSON(Data(bytes))
    }

    /// The header members this build reads, matched on their bytes: building a `String` per key
    /// and hashing it into a set showed up in profiles (every message decodes about ten keys).
    private enum Field: Int, CaseIterable {
        case v, id, kind, type, correlationId, sentAt, deadline, traceparent, principal, idempotencyKey,
            sequence, payload, error

        static let names: [(bytes: [UInt8], field: Field)] = allCases.map { (Array("\($0)".utf8), $0) }

        static func matching(_ key: Range<Int>, in scanner: JSONScanner) throws(JSONScanner.Malformed) -> Field? {
            let length = key.count - 2  // without the quotes; escaped keys are decoded by stringEquals
            let escaped = scanner.unquoted(key) == nil
            for (name, field) in names where escaped || name.count == length {
                if try scanner.stringEquals(key, name) { return field }
            }
            return nil
        }

        var bit: UInt16 { 1 << UInt16(rawValue) }
        static let required: [Field] = [.v, .id, .kind, .type]
    }

    /// A placeholder id for an envelope being decoded: `MessageID.make()` (the initializer's
    /// default) would read the system CSPRNG only to be overwritten by the `id` member.
    private static let unsetID = UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0))

    /// Decodes the JSON form.
    static func decodeJSON(_ data: Data) throws(BusError) -> Envelope {
        var scanner = JSONScanner(data)
        do {
            let members = try scanner.topLevelMemberRanges()
            var envelope = Envelope(id: unsetID, kind: .request, type: "")
            var seen: UInt16 = 0
            for (key, range) in members {
                guard let field = try Field.matching(key, in: scanner) else { continue }  // unknown: ignored
                seen |= field.bit
                switch field {
                case .v: envelope.v = Int(try scanner.integer(at: range) ?? -1)
                case .id: envelope.id = try uuid(scanner, range, field: "id")
                case .kind:
                    guard let kind = try self.kind(scanner, range) else {
                        throw BusError(.invalidArgument, "envelope kind must be request, reply or event")
                    }
                    envelope.kind = kind
                case .type: envelope.type = try scanner.string(at: range) ?? ""
                case .correlationId:
                    envelope.correlationId = scanner.isNull(range) ? nil : try uuid(scanner, range, field: "correlationId")
                case .sentAt: envelope.sentAt = try date(scanner, range, field: "sentAt") ?? envelope.sentAt
                case .deadline: envelope.deadline = try date(scanner, range, field: "deadline")
                case .traceparent: envelope.traceparent = try scanner.string(at: range)
                case .principal: envelope.principal = try principal(scanner, range)
                case .idempotencyKey: envelope.idempotencyKey = try scanner.string(at: range)
                case .sequence: envelope.sequence = try scanner.integer(at: range)
                case .payload: envelope.payload = scanner.isNull(range) ? nil : scanner.slice(range)
                case .error:
                    if !scanner.isNull(range) {
                        envelope.error =
                            (try? BusJSON.decode(BusError.self, from: scanner.slice(range)))
                            ?? BusError(.internal, "unreadable error from peer")
                    }
                }
            }
            for required in Field.required where seen & required.bit == 0 {
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

    private static let kinds: [(bytes: [UInt8], kind: Envelope.Kind)] =
        [Envelope.Kind.request, .reply, .event].map { (Array($0.rawValue.utf8), $0) }

    private static func kind(_ scanner: JSONScanner, _ range: Range<Int>) throws(JSONScanner.Malformed) -> Envelope.Kind? {
        for (name, kind) in kinds where try scanner.stringEquals(range, name) { return kind }
        return nil
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
        guard let date = scanner.unquoted(range).flatMap({ slice in slice.withUnsafeBufferPointer { Timestamp.parse(buffer: $0) } }) else {
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
