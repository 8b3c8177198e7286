import CLibPQ

extension PostgresConnection {
    /// Runs one parameterised statement (`PQexecParams`) and returns its rows.
    ///
    /// Values are bound to `$1`, `$2`…; they are never spliced into the SQL, so a value that looks
    /// like SQL is stored verbatim. Results arrive in binary format (exact, and independent of
    /// `DateStyle`/locale settings).
    @discardableResult
    public func query(_ sql: String, _ parameters: (any PostgresEncodable)?...) throws -> PostgresRows {
        try query(sql, parameters: parameters)
    }

    /// ``query(_:_:)`` with the parameters as an array.
    @discardableResult
    public func query(_ sql: String, parameters: [(any PostgresEncodable)?]) throws -> PostgresRows {
        let raw = try connection(for: "PQexecParams")
        let result = BoundParameters(parameters).withPointers { count, types, values, lengths, formats in
            PQexecParams(raw, sql, count, types, values, lengths, formats, 1)
        }
        return try checkResult(result, operation: "PQexecParams")
    }

    /// Runs one parameterised statement and returns the number of rows it affected.
    @discardableResult
    public func execute(_ sql: String, _ parameters: (any PostgresEncodable)?...) throws -> Int {
        try query(sql, parameters: parameters).affectedRows
    }

    /// ``execute(_:_:)`` with the parameters as an array.
    @discardableResult
    public func execute(_ sql: String, parameters: [(any PostgresEncodable)?]) throws -> Int {
        try query(sql, parameters: parameters).affectedRows
    }

    /// Runs trusted SQL text, possibly several statements, with the simple query protocol
    /// (`PQexec`).
    ///
    /// This is the one exception to "parameters only": it exists for migration files and fixed
    /// maintenance statements that carry no input. Never pass text built from input here.
    public func executeScript(_ sql: String) throws {
        let raw = try connection(for: "PQexec")
        _ = try checkResult(PQexec(raw, sql), operation: "PQexec")
    }

    /// Wraps a `PGresult`: rows on success, otherwise a ``PostgresError`` with the server's fields.
    /// A `nil` result means libpq could not even send the command (out of memory, connection
    /// lost).
    func checkResult(_ result: OpaquePointer?, operation: String) throws -> PostgresRows {
        guard let result else {
            throw PostgresError.fromConnection(raw, operation: operation)
        }
        let handle = ResultHandle(result)
        switch PQresultStatus(result) {
        case PGRES_TUPLES_OK, PGRES_COMMAND_OK, PGRES_EMPTY_QUERY, PGRES_SINGLE_TUPLE:
            return PostgresRows(handle)
        default:
            let error = PostgresError.fromResult(result, connection: raw, operation: operation)
            if error.isConnectionFailure {
                logger.debug("postgres connection failed", metadata: ["error": "\(error)"])
            }
            throw error
        }
    }
}
