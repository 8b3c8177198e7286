import Foundation

/// The envelope's binary form, what every peer writes: a fixed header for the members every
/// message has, then the optional members as tagged, length-prefixed fields, then nothing else.
/// All integers are big-endian.
///
/// ```
/// offset  size  member
///  0      1     0x01, the marker (JSON starts with `{` or whitespace, a container with 0x00)
///  1      8     v (Int64)
///  9      1     kind: 1 request, 2 reply, 3 event
/// 10     16     id (UUID bytes)
/// 26      8     sentAt, seconds since 1970 (the Float64's bits)
/// 34      4     type: length n (UInt32), then n bytes of UTF-8
/// 38+n    …     fields: tag (UInt8), length (UInt32), value; unknown tags are skipped
/// ```
///
/// Field tags: 1 `correlationId` (16 bytes), 2 `deadline` (as `sentAt`), 3 `traceparent` (UTF-8),
/// 4 `principal` (kind byte as ``principalKinds``, then the id's UTF-8), 5 `idempotencyKey`
/// (UTF-8), 6 `sequence` (Int64), 7 `error` (see ``writeError(_:)``), 8 `payload` (the payload's
/// JSON bytes, as they are).
///
/// Why not JSON: writing and reading the JSON header was about a fifth of a call's CPU (two of
/// each per call, every member escaped or scanned, the payload scanned past). Here a decode is a
/// bounds-checked walk over a few fields and one copy of the payload. Unknown fields are skipped
/// as unknown JSON members were, so peers can still add members; a newer `v` still decodes, so
/// the server can answer it with its error.
enum BinaryEnvelope {
    static let marker: UInt8 = 0x01

    enum Tag: UInt8 {
        case correlationId = 1
        case deadline
        case traceparent
        case principal
        case idempotencyKey
        case sequence
        case error
        case payload
    }

    static let kinds: [Envelope.Kind] = [.request, .reply, .event]
    static let principalKinds: [Principal.Kind] = [.user, .service, .operator, .anonymous]

    /// The instants the JSON form can write (years 0001 to 9999), in seconds since 1970: a time
    /// outside them (or not finite) is refused on reading and clamped on writing, so that nothing
    /// that formats or converts a decoded time can overflow.
    static let earliest: Double = -62_135_596_800
    static let latest: Double = 253_402_300_799.999

    /// A time as the bits of its `Double` seconds since 1970: exact both ways, so a decoded
    /// envelope re-encodes to the same bytes (milliseconds through floating point did not, far
    /// from 1970).
    static func bits(_ date: Date) -> Int64 {
        let seconds = date.timeIntervalSince1970
        let clamped = seconds.isNaN ? 0 : min(max(seconds, earliest), latest)
        return Int64(bitPattern: clamped.bitPattern)
    }

    static func date(_ bits: Int64, _ field: String) throws(BusError) -> Date {
        let seconds = Double(bitPattern: UInt64(bitPattern: bits))
        guard seconds.isFinite, seconds >= earliest, seconds <= latest else {
            throw BusError(.invalidArgument, "envelope \(field) is out of range")
        }
        return Date(timeIntervalSince1970: seconds)
    }

    /// The offset where the type's length is, and the size of everything before the type's bytes.
    static let typeLengthOffset = 34
    static let fixedSize = 38

    // MARK: Writing

    /// The exact number of bytes ``write(_:to:)`` writes for `envelope` (its error excepted, which
    /// is measured when written).
    static func size(of envelope: Envelope, error: [UInt8]?, payload: [UInt8]? = nil) -> Int {
        var size = fixedSize + envelope.type.utf8.count
        if envelope.correlationId != nil { size += 5 + 16 }
        if envelope.deadline != nil { size += 5 + 8 }
        if let traceparent = envelope.traceparent { size += 5 + traceparent.utf8.count }
        if let principal = envelope.principal { size += 5 + 1 + principal.id.utf8.count }
        if let key = envelope.idempotencyKey { size += 5 + key.utf8.count }
        if envelope.sequence != nil { size += 5 + 8 }
        if let error { size += 5 + error.count }
        if let payload { size += 5 + payload.count } else if let payload = envelope.payload { size += 5 + payload.count }
        return size
    }

    /// The envelope's bytes, in one allocation. A `payload` given here (JSON bytes encoded
    /// straight into an array, see ``BusJSON``) stands for `envelope.payload`, which is then not
    /// read: the typed call paths never box their payload in a `Data`.
    static func encode(_ envelope: Envelope, payload: [UInt8]? = nil) -> [UInt8] {
        let error = envelope.error.map(writeError)
        let size = size(of: envelope, error: error, payload: payload)
        return [UInt8](unsafeUninitializedCapacity: size) { buffer, initialized in
            var writer = ByteWriter(buffer)
            write(envelope, error: error, payload: payload, to: &writer)
            precondition(writer.offset == size, "binary envelope size mismatch")
            initialized = size
        }
    }

    static func write(_ envelope: Envelope, error: [UInt8]?, payload bytes: [UInt8]?, to writer: inout ByteWriter) {
        writer.byte(marker)
        writer.int64(Int64(envelope.v))
        writer.byte(UInt8(kinds.firstIndex(of: envelope.kind)! + 1))
        writer.uuid(envelope.id)
        writer.int64(bits(envelope.sentAt))
        writer.uint32(UInt32(envelope.type.utf8.count))
        writer.string(envelope.type)
        if let id = envelope.correlationId {
            writer.field(.correlationId, length: 16)
            writer.uuid(id)
        }
        if let deadline = envelope.deadline {
            writer.field(.deadline, length: 8)
            writer.int64(bits(deadline))
        }
        if let traceparent = envelope.traceparent {
            writer.field(.traceparent, length: traceparent.utf8.count)
            writer.string(traceparent)
        }
        if let principal = envelope.principal {
            writer.field(.principal, length: 1 + principal.id.utf8.count)
            writer.byte(UInt8(principalKinds.firstIndex(of: principal.kind)!))
            writer.string(principal.id)
        }
        if let key = envelope.idempotencyKey {
            writer.field(.idempotencyKey, length: key.utf8.count)
            writer.string(key)
        }
        if let sequence = envelope.sequence {
            writer.field(.sequence, length: 8)
            writer.int64(sequence)
        }
        if let error {
            writer.field(.error, length: error.count)
            writer.bytes(error)
        }
        if let bytes {
            writer.field(.payload, length: bytes.count)
            writer.bytes(bytes)
        } else if let payload = envelope.payload {
            writer.field(.payload, length: payload.count)
            payload.withUnsafeBytes { writer.bytes($0) }
        }
    }

    /// An error as code (UInt32 length, UTF-8), message (likewise), then the number of details
    /// (UInt32; 0xFFFFFFFF for none at all) and each key and value (likewise), keys in byte order
    /// so that equal errors are equal bytes.
    static func writeError(_ error: BusError) -> [UInt8] {
        let details = error.details.map { $0.sorted { $0.key.utf8.lexicographicallyPrecedes($1.key.utf8) } }
        var size = 4 + error.code.rawValue.utf8.count + 4 + error.message.utf8.count + 4
        for (key, value) in details ?? [] { size += 8 + key.utf8.count + value.utf8.count }
        return [UInt8](unsafeUninitializedCapacity: size) { buffer, initialized in
            var writer = ByteWriter(buffer)
            for text in [error.code.rawValue, error.message] {
                writer.uint32(UInt32(text.utf8.count))
                writer.string(text)
            }
            writer.uint32(details.map { UInt32($0.count) } ?? .max)
            for (key, value) in details ?? [] {
                writer.uint32(UInt32(key.utf8.count))
                writer.string(key)
                writer.uint32(UInt32(value.utf8.count))
                writer.string(value)
            }
            initialized = writer.offset
        }
    }

    // MARK: Reading

    /// Decodes a binary envelope from borrowed bytes (a received frame, read in place); only the
    /// payload and the strings are copied out. Anything malformed is an `invalid_argument`.
    static func decode(_ bytes: UnsafeRawBufferPointer) throws(BusError) -> Envelope {
        var reader = ByteReader(bytes)
        guard reader.byte() == marker, let v = reader.int64(), let kindByte = reader.byte(), let id = reader.uuid(),
            let sentAt = reader.int64(), let typeLength = reader.uint32(), let typeBytes = reader.bytes(Int(typeLength))
        else { throw BusError(.invalidArgument, "envelope is truncated") }
        guard (1...3).contains(kindByte) else {
            throw BusError(.invalidArgument, "envelope kind must be request, reply or event")
        }
        guard let type = string(typeBytes) else { throw invalidUTF8("type") }
        guard !type.isEmpty else { throw BusError(.invalidArgument, "envelope type is empty") }
        var envelope = Envelope(
            v: Int(v), id: id, kind: kinds[Int(kindByte) - 1], type: type, sentAt: try date(sentAt, "sentAt"))
        while !reader.isAtEnd {
            guard let tagByte = reader.byte(), let length = reader.uint32(), let value = reader.bytes(Int(length)) else {
                throw BusError(.invalidArgument, "envelope field is truncated")
            }
            guard let tag = Tag(rawValue: tagByte) else { continue }  // unknown: ignored
            try read(tag, value, into: &envelope)
        }
        return envelope
    }

    private static func read(_ tag: Tag, _ value: UnsafeRawBufferPointer, into envelope: inout Envelope) throws(BusError) {
        var field = ByteReader(value)
        switch tag {
        case .correlationId:
            guard value.count == 16, let id = field.uuid() else { throw wrongSize("correlationId") }
            envelope.correlationId = id
        case .deadline:
            guard value.count == 8, let time = field.int64() else { throw wrongSize("deadline") }
            envelope.deadline = try date(time, "deadline")
        case .sequence:
            guard value.count == 8, let sequence = field.int64() else { throw wrongSize("sequence") }
            envelope.sequence = sequence
        case .traceparent:
            guard let text = string(value) else { throw invalidUTF8("traceparent") }
            envelope.traceparent = text
        case .idempotencyKey:
            guard let text = string(value) else { throw invalidUTF8("idempotencyKey") }
            envelope.idempotencyKey = text
        case .principal:
            guard let kind = field.byte(), Int(kind) < principalKinds.count, let id = string(field.rest()) else {
                throw BusError(.invalidArgument, "envelope principal needs a known kind and an id")
            }
            envelope.principal = Principal(principalKinds[Int(kind)], id)
        case .payload:
            envelope.payload = Data(value)
        case .error:
            envelope.error = readError(value) ?? BusError(.internal, "unreadable error from peer")
        }
    }

    /// The error written by ``writeError(_:)``; `nil` when the bytes are not one. A code this build
    /// does not know reads as `internal`, as in JSON.
    static func readError(_ bytes: UnsafeRawBufferPointer) -> BusError? {
        var reader = ByteReader(bytes)
        func text() -> String? {
            guard let length = reader.uint32(), let bytes = reader.bytes(Int(length)) else { return nil }
            return string(bytes)
        }
        guard let code = text(), let message = text(), let count = reader.uint32() else { return nil }
        var details: [String: String]?
        if count != .max {
            guard Int(count) <= bytes.count / 8 else { return nil }
            var read: [String: String] = [:]
            for _ in 0..<count {
                guard let key = text(), let value = text() else { return nil }
                read[key] = value
            }
            details = read
        }
        guard reader.isAtEnd else { return nil }
        return BusError(ErrorCode(rawValue: code) ?? .internal, message, details: details)
    }

    /// The UTF-8 text of `bytes`; `nil` when they are not valid UTF-8 (refused, as JSON refuses it).
    private static func string(_ bytes: UnsafeRawBufferPointer) -> String? {
        String(validating: bytes.assumingMemoryBound(to: UInt8.self), as: UTF8.self)
    }

    private static func invalidUTF8(_ field: String) -> BusError {
        BusError(.invalidArgument, "envelope \(field) is not valid UTF-8")
    }

    private static func wrongSize(_ field: String) -> BusError {
        BusError(.invalidArgument, "envelope \(field) has the wrong size")
    }
}

/// Writes big-endian integers and bytes into a buffer sized in advance.
struct ByteWriter {
    private let buffer: UnsafeMutableBufferPointer<UInt8>
    private(set) var offset = 0

    init(_ buffer: UnsafeMutableBufferPointer<UInt8>) { self.buffer = buffer }

    mutating func byte(_ value: UInt8) {
        buffer[offset] = value
        offset += 1
    }

    mutating func uint32(_ value: UInt32) { raw(value.bigEndian) }
    mutating func int64(_ value: Int64) { raw(value.bigEndian) }

    mutating func uuid(_ id: UUID) { raw(id.uuid) }

    mutating func field(_ tag: BinaryEnvelope.Tag, length: Int) {
        byte(tag.rawValue)
        uint32(UInt32(length))
    }

    mutating func string(_ text: String) {
        var text = text
        text.withUTF8 { bytes(UnsafeRawBufferPointer($0)) }
    }

    mutating func bytes(_ source: [UInt8]) { source.withUnsafeBytes { bytes($0) } }

    mutating func bytes(_ source: UnsafeRawBufferPointer) {
        guard let base = source.baseAddress, !source.isEmpty else { return }
        precondition(offset + source.count <= buffer.count, "ByteWriter overflow")
        UnsafeMutableRawPointer(buffer.baseAddress! + offset).copyMemory(from: base, byteCount: source.count)
        offset += source.count
    }

    private mutating func raw<T>(_ value: T) {
        withUnsafeBytes(of: value) { bytes($0) }
    }
}

/// Reads big-endian integers and byte ranges from borrowed bytes; every read is bounds-checked
/// and returns `nil` past the end.
struct ByteReader {
    private let bytes: UnsafeRawBufferPointer
    private var offset = 0

    init(_ bytes: UnsafeRawBufferPointer) { self.bytes = bytes }

    var isAtEnd: Bool { offset == bytes.count }

    mutating func byte() -> UInt8? {
        guard offset < bytes.count else { return nil }
        defer { offset += 1 }
        return bytes[offset]
    }

    mutating func uint32() -> UInt32? {
        guard bytes.count - offset >= 4 else { return nil }
        defer { offset += 4 }
        return UInt32(bigEndian: bytes.loadUnaligned(fromByteOffset: offset, as: UInt32.self))
    }

    mutating func int64() -> Int64? {
        guard bytes.count - offset >= 8 else { return nil }
        defer { offset += 8 }
        return Int64(bigEndian: bytes.loadUnaligned(fromByteOffset: offset, as: Int64.self))
    }

    mutating func uuid() -> UUID? {
        guard bytes.count - offset >= 16 else { return nil }
        defer { offset += 16 }
        return UUID(uuid: bytes.loadUnaligned(fromByteOffset: offset, as: uuid_t.self))
    }

    mutating func bytes(_ count: Int) -> UnsafeRawBufferPointer? {
        guard count >= 0, bytes.count - offset >= count else { return nil }
        defer { offset += count }
        return UnsafeRawBufferPointer(rebasing: bytes[offset..<offset + count])
    }

    mutating func rest() -> UnsafeRawBufferPointer {
        defer { offset = bytes.count }
        return UnsafeRawBufferPointer(rebasing: bytes[offset...])
    }
}
