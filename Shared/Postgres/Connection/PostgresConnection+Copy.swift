import CLibPQ
import Hex

/// Streams data into a running `COPY … FROM STDIN`: raw bytes, or rows in PostgreSQL's text
/// COPY format. Buffers up to 64 KiB per `PQputCopyData` call.
public struct PostgresCopyWriter {
    private let raw: OpaquePointer
    private var buffer: [UInt8] = []
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
        for (index, value) in values.enumerated() {
            if index > 0 { buffer.append(UInt8(ascii: "\t")) }
            guard let parameter = value?.postgresParameter else {
                buffer.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "N")])
                continue
            }
            if parameter.format == .binary {
                // Only bytea is sent in binary; its text form is \x + hex, backslash escaped.
                buffer.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "\\"), UInt8(ascii: "x")])
                for byte in parameter.bytes { Hex.append(byte, to: &buffer) }
                continue
            }
            for byte in parameter.bytes {
                switch byte {
                case UInt8(ascii: "\\"): buffer.append(contentsOf: [byte, byte])
                case UInt8(ascii: "\t"): buffer.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "t")])
                case UInt8(ascii: "\n"): buffer.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "n")])
                case UInt8(ascii: "\r"): buffer.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "r")])
                default: buffer.append(byte)
                }
            }
        }
        buffer.append(UInt8(ascii: "\n"))
        if buffer.count >= Self.flushThreshold { try flush() }
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
