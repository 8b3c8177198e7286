import CLibPQ

/// Owns one `PGresult` and clears it when the last reference goes.
///
/// `@unchecked Sendable` is safe here: libpq documents a `PGresult` as read-only after creation
/// and independent of its `PGconn` ("can be passed around freely between threads"); this class
/// only reads it (`PQgetvalue`, `PQftype`…), and `PQclear` runs once, in `deinit`, when no other
/// reference exists.
final class ResultHandle: @unchecked Sendable {
    let pointer: OpaquePointer

    init(_ pointer: OpaquePointer) { self.pointer = pointer }
    deinit { PQclear(pointer) }
}

/// The rows of one statement's result, decoded lazily column by column.
///
/// `Sendable` and independent of the connection: it can be returned from `withConnection`.
public struct PostgresRows: Sendable, RandomAccessCollection {
    let handle: ResultHandle
    /// Column names, in order.
    public let columnNames: [String]

    init(_ handle: ResultHandle) {
        self.handle = handle
        let result = handle.pointer
        columnNames = (0..<PQnfields(result)).map { String(cString: PQfname(result, $0)) }
    }

    public var startIndex: Int { 0 }
    public var endIndex: Int { Int(PQntuples(handle.pointer)) }
    public subscript(position: Int) -> PostgresRow { PostgresRow(rows: self, index: Int32(position)) }

    /// Rows inserted, updated, deleted, copied… (`PQcmdTuples`); 0 when the command reports none.
    public var affectedRows: Int {
        Int(String(cString: PQcmdTuples(handle.pointer))) ?? 0
    }

    /// The command tag, e.g. `INSERT 0 3` or `SELECT 2`.
    public var commandTag: String { String(cString: PQcmdStatus(handle.pointer)) }

    /// The index of the column called `name` (exact, case-sensitive), or `nil`.
    public func columnIndex(_ name: String) -> Int? { columnNames.firstIndex(of: name) }
}

/// One row of a ``PostgresRows``.
public struct PostgresRow: Sendable {
    let rows: PostgresRows
    let index: Int32

    public var columnCount: Int { rows.columnNames.count }

    /// Decodes column `column` (0-based) into `type`; use an `Optional` type for nullable columns.
    public func decode<T: PostgresDecodable>(_ type: T.Type = T.self, column: Int) throws -> T {
        guard column >= 0, column < rows.columnNames.count else {
            throw PostgresError.decoding("no column \(column): the row has \(rows.columnNames.count)")
        }
        let result = rows.handle.pointer
        let col = Int32(column)
        let name = rows.columnNames[column]
        guard PQgetisnull(result, index, col) == 0 else {
            return try T.decode(from: PostgresCell(typeOID: PQftype(result, col), bytes: nil, columnName: name))
        }
        let bytes = UnsafeRawBufferPointer(
            start: PQgetvalue(result, index, col), count: Int(PQgetlength(result, index, col)))
        return try T.decode(from: PostgresCell(typeOID: PQftype(result, col), bytes: bytes, columnName: name))
    }

    /// Decodes the column called `column`.
    public func decode<T: PostgresDecodable>(_ type: T.Type = T.self, column: String) throws -> T {
        guard let position = rows.columnIndex(column) else {
            throw PostgresError.decoding("no column named \"\(column)\"", column: column)
        }
        return try decode(type, column: position)
    }

    /// Decodes every column, in order, into a tuple: `let (id, name) = try row.decode(Int.self, String.self)`.
    public func decode<each T: PostgresDecodable>(_ types: repeat (each T).Type) throws -> (repeat each T) {
        var column = 0
        func next<U: PostgresDecodable>(_ type: U.Type) throws -> U {
            defer { column += 1 }
            return try decode(type, column: column)
        }
        return (repeat try next((each T).self))
    }
}
