import CLibPQ

/// A named statement that each connection prepares (`PQprepare`) the first time it runs it.
///
/// Declare these once (e.g. as `static let`s in a store); a pool's connections prepare them
/// lazily, so a connection opened after a server restart prepares them again by itself.
public struct PostgresStatement: Sendable, Hashable {
    public let name: String
    public let sql: String

    public init(name: String, sql: String) {
        self.name = name
        self.sql = sql
    }
}

extension PostgresConnection {
    /// Prepares `statement` on this connection unless it already is. Parameter types are left to
    /// the server to infer from the SQL (cast with `$1::type` where ambiguous).
    public func prepare(_ statement: PostgresStatement) throws {
        guard !preparedNames.contains(statement.name) else { return }
        let raw = try connection(for: "PQprepare")
        _ = try checkResult(PQprepare(raw, statement.name, statement.sql, 0, nil), operation: "PQprepare")
        preparedNames.insert(statement.name)
    }

    /// Same as ``prepare(_:)`` with a name and SQL.
    public func prepare(name: String, sql: String) throws {
        try prepare(PostgresStatement(name: name, sql: sql))
    }

    /// Runs a prepared statement (`PQexecPrepared`), preparing it first if needed.
    @discardableResult
    public func query(_ statement: PostgresStatement, _ parameters: (any PostgresEncodable)?...) throws
        -> PostgresRows
    {
        try query(statement, parameters: parameters)
    }

    /// ``query(_:_:)-(PostgresStatement,_)`` with the parameters as an array.
    @discardableResult
    public func query(_ statement: PostgresStatement, parameters: [(any PostgresEncodable)?]) throws
        -> PostgresRows
    {
        try prepare(statement)
        return try executePrepared(name: statement.name, parameters: parameters)
    }

    /// Runs a prepared statement and returns the number of rows it affected.
    @discardableResult
    public func execute(_ statement: PostgresStatement, _ parameters: (any PostgresEncodable)?...) throws
        -> Int
    {
        try query(statement, parameters: parameters).affectedRows
    }

    /// Runs the statement prepared under `name` (by ``prepare(name:sql:)`` or SQL `PREPARE`).
    @discardableResult
    public func executePrepared(name: String, parameters: [(any PostgresEncodable)?]) throws
        -> PostgresRows
    {
        let raw = try connection(for: "PQexecPrepared")
        let result = BoundParameters(parameters).withPointers { count, _, values, lengths, formats in
            PQexecPrepared(raw, name, count, values, lengths, formats, 1)
        }
        return try checkResult(result, operation: "PQexecPrepared")
    }
}
