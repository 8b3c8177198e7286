import CLibPQ
import Foundation
import Hex

/// Streams data into a running `COPY … FROM STDIN`: raw bytes, or rows in PostgreSQL's text
/// COPY format. Buffers up to 64 KiB per `PQputCopyData` call.
public struct PostgresCopyWriter {
    private let raw: OpaquePointer
    private var buffer: [UInt8] = []
    /// Fields written in the current row (typed fields separate themselves with a tab).
    private var fieldsInRow = 0
    private static let flushThreshold = 64 * 1024

    init(raw: OpaquePointer) {
        self.raw = raw
        buffer.reserveCapacity(Self.flushThreshold + 4096)
    }

    /// Appends raw bytes in whatever format the COPY statement declared.
    public mutating func write(_ bytes: some Sequence<UInt8>) throws {
        buffer.append(contentsOf: bytes)
        if buffer.count >= Self.flushThreshold { try flush() }
    }

    /// Appends one row in text format (the COPY default): values tab-separated, `\N` for `NULL`,
    /// backslash, tab, newline and carriage return escaped; `bytea` as `\x` hex.
    public mutating func writeRow(_ values: [(any PostgresEncodable)?]) throws {
        for value in values {
            guard let parameter = value?.postgresParameter else {
                field(nil as String?)
                continue
            }
            separate()
            // Only bytea is sent in binary; its text form is \x + hex, backslash escaped.
            if parameter.format == .binary { appendBytea(parameter.bytes) } else { appendEscaped(parameter.bytes) }
        }
        try endRow()
    }

    // MARK: Typed fields
    // A row field by field, in column order, then `endRow()`: the same text as `writeRow`, without
    // an array of boxed values and a parameter buffer per value (a few dozen allocations per row
    // on Audit's write path).

    public mutating func field(_ value: Int64) {
        separate()
        buffer.append(contentsOf: String(value).utf8)
    }

    public mutating func field(_ value: Int) { field(Int64(value)) }

    public mutating func field(_ value: UUID) {
        separate()
        Hex.appendUUID(value, to: &buffer)
    }

    /// Text, or `NULL` for nil.
    public mutating func field(_ text: String?) {
        separate()
        guard let text else {
            buffer.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "N")])
            return
        }
        appendEscaped(text.utf8)
    }

    /// A `bytea` value, or `NULL` for nil.
    public mutating func field(bytea: [UInt8]?) {
        guard let bytea else { return field(nil as String?) }
        separate()
        appendBytea(bytea)
    }

    /// Ends the row begun by the fields since the last one.
    public mutating func endRow() throws {
        buffer.append(UInt8(ascii: "\n"))
        fieldsInRow = 0
        if buffer.count >= Self.flushThreshold { try flush() }
    }

    private mutating func separate() {
        if fieldsInRow > 0 { buffer.append(UInt8(ascii: "\t")) }
        fieldsInRow += 1
    }

    private mutating func appendBytea(_ bytes: [UInt8]) {
        buffer.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "\\"), UInt8(ascii: "x")])
        for byte in bytes { Hex.append(byte, to: &buffer) }
    }

    private mutating func appendEscaped(_ bytes: some Sequence<UInt8>) {
        for byte in bytes {
            switch byte {
            case UInt8(ascii: "\\"): buffer.append(contentsOf: [byte, byte])
            case UInt8(ascii: "\t"): buffer.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "t")])
            case UInt8(ascii: "\n"): buffer.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "n")])
            case UInt8(ascii: "\r"): buffer.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "r")])
            default: buffer.append(byte)
            }
        }
    }

    mutating func flush() throws {
        guard !buffer.isEmpty else { return }
        let sent = buffer.withUnsafeBytes { bytes in
            PQputCopyData(raw, bytes.baseAddress?.assumingMemoryBound(to: CChar.self), Int32(bytes.count))
        }
        guard sent == 1 else { throw PostgresError.fromConnection(raw, operation: "PQputCopyData") }
        buffer.removeAll(keepingCapacity: true)
    }
}

extension PostgresConnection {
    /// Runs `sql` (a `COPY … FROM STDIN` statement: trusted text naming a table and columns,
    /// no input) and lets `body` stream the data. Returns the number of rows copied.
    ///
    /// If `body` throws, the COPY is cancelled (`PQputCopyEnd` with an error), nothing is
    /// inserted, and the error is rethrown.
    @discardableResult
    public func copyIn(_ sql: String, _ body: (inout PostgresCopyWriter) throws -> Void) throws -> Int {
        let raw = try connection(for: "PQexecParams")
        guard let start = PQexecParams(raw, sql, 0, nil, nil, nil, nil, 0) else {
            throw PostgresError.fromConnection(raw, operation: "PQexecParams")
        }
        guard PQresultStatus(start) == PGRES_COPY_IN else {
            _ = try checkResult(start, operation: "PQexecParams")
            throw PostgresError(kind: .usage, operation: "copyIn", message: "not a COPY … FROM STDIN statement")
        }
        PQclear(start)
        var writer = PostgresCopyWriter(raw: raw)
        do {
            try body(&writer)
            try writer.flush()
        } catch {
            if PQputCopyEnd(raw, "cancelled by the client: \(error)") == 1 { drainResults(raw) }
            throw error
        }
        guard PQputCopyEnd(raw, nil) == 1 else {
            throw PostgresError.fromConnection(raw, operation: "PQputCopyEnd")
        }
        defer { drainResults(raw) }
        return try checkResult(PQgetResult(raw), operation: "PQputCopyEnd").affectedRows
    }

    /// Copies `rows` in text format; see ``copyIn(_:_:)``.
    @discardableResult
    public func copyIn(_ sql: String, rows: some Sequence<[(any PostgresEncodable)?]>) throws -> Int {
        try copyIn(sql) { writer in
            for row in rows { try writer.writeRow(row) }
        }
    }

    /// Reads the remaining results of a command so the connection is ready for the next one.
    func drainResults(_ raw: OpaquePointer) {
        while let result = PQgetResult(raw) { PQclear(result) }
    }
}
