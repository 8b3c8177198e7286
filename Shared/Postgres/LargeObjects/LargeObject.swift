import CLibPQ

#if canImport(Glibc)
    import Glibc
#endif

/// An open large object (`lo_open` descriptor) on one connection, with 64-bit offsets.
///
/// PostgreSQL closes large object descriptors at the end of the transaction, so a handle is only
/// valid inside the ``PostgresConnection/transaction(_:)`` (or `withTransaction` body) that
/// opened it. It is deliberately not `Sendable`: it cannot leave that body. Using it from any
/// other thread throws a `.usage` error instead of touching the connection.
public struct LargeObject {
    /// The large object's OID: what a table stores to refer to it.
    public let oid: UInt32
    /// The descriptor `lo_open` returned.
    public let descriptor: Int32
    private let connection: PostgresConnection

    init(oid: UInt32, descriptor: Int32, connection: PostgresConnection) {
        self.oid = oid
        self.descriptor = descriptor
        self.connection = connection
    }

    public enum Whence: Int32, Sendable {
        case start, current, end
        var value: Int32 {
            switch self {
            case .start: SEEK_SET
            case .current: SEEK_CUR
            case .end: SEEK_END
            }
        }
    }

    /// Writes `bytes` at the current position (`lo_write`); returns the count written.
    @discardableResult
    public func write(_ bytes: [UInt8]) throws -> Int {
        try withConnection("lo_write") { raw, descriptor in
            let written = bytes.withUnsafeBytes { buffer in
                lo_write(raw, descriptor, buffer.baseAddress?.assumingMemoryBound(to: CChar.self), buffer.count)
            }
            guard written >= 0 else { throw PostgresError.fromConnection(raw, operation: "lo_write") }
            return Int(written)
        }
    }

    /// Reads up to `count` bytes from the current position (`lo_read`); empty at the end.
    public func read(upTo count: Int) throws -> [UInt8] {
        try withConnection("lo_read") { raw, descriptor in
            var buffer = [UInt8](repeating: 0, count: count)
            let read = buffer.withUnsafeMutableBytes { buffer in
                lo_read(raw, descriptor, buffer.baseAddress?.assumingMemoryBound(to: CChar.self), buffer.count)
            }
            guard read >= 0 else { throw PostgresError.fromConnection(raw, operation: "lo_read") }
            buffer.removeLast(count - Int(read))
            return buffer
        }
    }

    /// Moves the position (`lo_lseek64`); returns the new position.
    @discardableResult
    public func seek(to offset: Int64, from whence: Whence = .start) throws -> Int64 {
        try withConnection("lo_lseek64") { raw, descriptor in
            let position = Int64(lo_lseek64(raw, descriptor, pg_int64(offset), whence.value))
            guard position >= 0 else { throw PostgresError.fromConnection(raw, operation: "lo_lseek64") }
            return position
        }
    }

    /// The current position (`lo_tell64`).
    public func tell() throws -> Int64 {
        try withConnection("lo_tell64") { raw, descriptor in
            let position = Int64(lo_tell64(raw, descriptor))
            guard position >= 0 else { throw PostgresError.fromConnection(raw, operation: "lo_tell64") }
            return position
        }
    }

    /// Cuts or zero-extends the object to `length` bytes (`lo_truncate64`).
    public func truncate(to length: Int64) throws {
        try withConnection("lo_truncate64") { raw, descriptor in
            guard lo_truncate64(raw, descriptor, pg_int64(length)) == 0 else {
                throw PostgresError.fromConnection(raw, operation: "lo_truncate64")
            }
        }
    }

    /// The size in bytes: seeks to the end and back.
    public func size() throws -> Int64 {
        let position = try tell()
        let end = try seek(to: 0, from: .end)
        try seek(to: position)
        return end
    }

    /// Closes the descriptor (`lo_close`); the transaction's end would close it too.
    public func close() throws {
        try withConnection("lo_close") { raw, descriptor in
            guard lo_close(raw, descriptor) == 0 else {
                throw PostgresError.fromConnection(raw, operation: "lo_close")
            }
        }
    }

    private func withConnection<T: Sendable>(_ operation: String, _ body: @Sendable (OpaquePointer, Int32) throws -> T) throws -> T {
        guard connection.runsOnCurrentThread else {
            throw PostgresError(
                kind: .usage, operation: operation,
                message: "a LargeObject must be used inside the transaction body that opened it")
        }
        let descriptor = self.descriptor
        return try connection.assumeIsolated { connection in
            try body(try connection.connection(for: operation), descriptor)
        }
    }
}

extension PostgresConnection {
    /// Access mode for ``openLargeObject(_:mode:)``.
    public enum LargeObjectMode: Sendable {
        case read, write, readWrite
        var flags: Int32 {
            switch self {
            case .read: CPQ_INV_READ
            case .write: CPQ_INV_WRITE
            case .readWrite: CPQ_INV_READ | CPQ_INV_WRITE
            }
        }
    }

    /// Creates an empty large object (`lo_creat`) and returns its OID. Needs a transaction.
    public func createLargeObject() throws -> UInt32 {
        let raw = try largeObjectConnection("lo_creat")
        let oid = lo_creat(raw, CPQ_INV_READ | CPQ_INV_WRITE)
        guard oid != 0 else { throw PostgresError.fromConnection(raw, operation: "lo_creat") }
        return oid
    }

    /// Opens large object `oid` (`lo_open`). Needs a transaction; the handle dies with it.
    public func openLargeObject(_ oid: UInt32, mode: LargeObjectMode = .readWrite) throws -> LargeObject {
        let raw = try largeObjectConnection("lo_open")
        let descriptor = lo_open(raw, oid, mode.flags)
        guard descriptor >= 0 else { throw PostgresError.fromConnection(raw, operation: "lo_open") }
        return LargeObject(oid: oid, descriptor: descriptor, connection: self)
    }

    /// Deletes large object `oid` (`lo_unlink`). Needs a transaction.
    public func unlinkLargeObject(_ oid: UInt32) throws {
        let raw = try largeObjectConnection("lo_unlink")
        guard lo_unlink(raw, oid) == 1 else { throw PostgresError.fromConnection(raw, operation: "lo_unlink") }
    }

    /// Large object descriptors only live within a transaction; outside one, each `lo_*` call
    /// would run in its own and the descriptor would be gone before the next call.
    private func largeObjectConnection(_ operation: String) throws -> OpaquePointer {
        let raw = try connection(for: operation)
        guard PQtransactionStatus(raw) == PQTRANS_INTRANS else {
            throw PostgresError(
                kind: .usage, operation: operation,
                message: "large objects must be used inside a transaction")
        }
        return raw
    }

    nonisolated var runsOnCurrentThread: Bool { threadExecutor.isCurrent }
}

/// A descriptor belongs to one connection's transaction: it must not cross to another task.
@available(*, unavailable)
extension LargeObject: Sendable {}
