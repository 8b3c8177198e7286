import CLibPQ

/// An error from PostgreSQL, from libpq, or from this wrapper.
///
/// Server errors carry the fields of the ErrorResponse (SQLSTATE, message, detail, hint,
/// constraint…); every error names the libpq call (or wrapper operation) that failed in
/// ``operation`` so a log line says where it came from.
public struct PostgresError: Error, Sendable, CustomStringConvertible {
    /// What went wrong, broadly: decides whether a pool may reuse the connection.
    public enum Kind: Sendable, Equatable {
        /// The server rejected the statement; ``sqlState`` says why. The connection is fine.
        case server
        /// Connecting failed or the connection was lost: the connection is unusable.
        case connection
        /// A value could not be decoded into the requested Swift type.
        case decoding
        /// The pool had no free connection before the checkout timeout.
        case checkoutTimeout
        /// The pool or connection was closed.
        case closed
        /// The wrapper was misused (e.g. a large object outside a transaction).
        case usage
    }

    public var kind: Kind
    /// The libpq function or wrapper operation that failed, e.g. `PQexecParams`.
    public var operation: String
    /// Primary message (`PG_DIAG_MESSAGE_PRIMARY`, or libpq's `PQerrorMessage`).
    public var message: String
    /// Five-character SQLSTATE when the server sent one, e.g. `23505`.
    public var sqlState: String?
    public var severity: String?
    public var detail: String?
    public var hint: String?
    public var constraint: String?
    public var schema: String?
    public var table: String?
    public var column: String?

    public init(
        kind: Kind, operation: String, message: String, sqlState: String? = nil,
        severity: String? = nil, detail: String? = nil, hint: String? = nil,
        constraint: String? = nil, schema: String? = nil, table: String? = nil,
        column: String? = nil
    ) {
        self.kind = kind
        self.operation = operation
        self.message = message
        self.sqlState = sqlState
        self.severity = severity
        self.detail = detail
        self.hint = hint
        self.constraint = constraint
        self.schema = schema
        self.table = table
        self.column = column
    }

    /// `23505`: a unique or primary-key constraint rejected the row.
    public var isUniqueViolation: Bool { sqlState == "23505" }
    /// `23503`: a foreign key constraint rejected the row.
    public var isForeignKeyViolation: Bool { sqlState == "23503" }
    /// `40001` / `40P01`: retrying the transaction may succeed.
    public var isSerializationFailure: Bool { sqlState == "40001" || sqlState == "40P01" }

    /// `XX000` "tuple concurrently updated" (or "deleted"): two sessions changed one catalog row at
    /// once, e.g. two `GRANT … ON ALL TABLES IN SCHEMA` on one schema (a re-run `compass db roles`
    /// beside a service's start-up grants, a Kubernetes Job beside its pods). PostgreSQL takes no
    /// lock for `GRANT`, so the later one fails instead of waiting; running it again succeeds. The
    /// message is the only mark: the SQLSTATE is the generic internal error.
    public var isConcurrentCatalogUpdate: Bool {
        sqlState == "XX000" && (message.hasPrefix("tuple concurrently updated") || message.hasPrefix("tuple concurrently deleted"))
    }

    /// Whether the failure says nothing about the statement, only about the moment: the database
    /// is unreachable, shutting down, read-only (`25006`, a standby after a fail-over), out of
    /// resources (class `53`), the statement lost a race (`40001`, `40P01`; not the rest of class
    /// `40`: `40002` is a deferred constraint the data broke) or hit a time limit (`55P03`
    /// `lock_timeout`, `57014` `statement_timeout`), or the pool had no connection in time or was
    /// closed. The same statement may succeed later; the bus answers all of them `unavailable`.
    public var isTransient: Bool {
        if isConnectionFailure || kind == .checkoutTimeout || kind == .closed || isSerializationFailure { return true }
        guard let sqlState else { return false }
        return sqlState.hasPrefix("53") || ["55P03", "57014", "25006"].contains(sqlState)
    }

    /// The connection cannot be used any more: it failed, was lost, or the server is shutting
    /// down (SQLSTATE class `08`, `57P01`…`57P03`). A pool discards such connections.
    public var isConnectionFailure: Bool {
        if kind == .connection { return true }
        guard let sqlState else { return false }
        return sqlState.hasPrefix("08") || ["57P01", "57P02", "57P03"].contains(sqlState)
    }

    public var description: String {
        var text = "\(operation): \(message)"
        if let sqlState { text += " (SQLSTATE \(sqlState))" }
        if let detail { text += " DETAIL: \(detail)" }
        if let hint { text += " HINT: \(hint)" }
        if let constraint { text += " CONSTRAINT: \(constraint)" }
        return text
    }
}

extension PostgresError {
    /// The error of a failed `PGresult`, with every diagnostic field the server sent.
    static func fromResult(_ result: OpaquePointer?, connection: OpaquePointer?, operation: String)
        -> PostgresError
    {
        func field(_ code: Int32) -> String? {
            guard let result, let value = PQresultErrorField(result, code) else { return nil }
            return String(cString: value)
        }
        let primary = field(CPQ_DIAG_MESSAGE_PRIMARY)
        let fallback = result.flatMap { PQresultErrorMessage($0) }.map { String(cString: $0) }
        let broken = connection.map { PQstatus($0) == CONNECTION_BAD } ?? true
        let sqlState = field(CPQ_DIAG_SQLSTATE)
        var message = primary ?? fallback?.trimmed ?? ""
        if message.isEmpty { message = connection.map(lastMessage) ?? "unknown error" }
        return PostgresError(
            kind: broken && sqlState == nil ? .connection : .server,
            operation: operation, message: message, sqlState: sqlState,
            severity: field(CPQ_DIAG_SEVERITY), detail: field(CPQ_DIAG_MESSAGE_DETAIL),
            hint: field(CPQ_DIAG_MESSAGE_HINT), constraint: field(CPQ_DIAG_CONSTRAINT_NAME),
            schema: field(CPQ_DIAG_SCHEMA_NAME), table: field(CPQ_DIAG_TABLE_NAME),
            column: field(CPQ_DIAG_COLUMN_NAME))
    }

    /// An error from `PQerrorMessage`, for calls that report failure without a `PGresult`.
    /// The kind is `.connection` when the connection is now bad.
    static func fromConnection(_ connection: OpaquePointer?, operation: String, kind: Kind? = nil)
        -> PostgresError
    {
        let broken = connection.map { PQstatus($0) == CONNECTION_BAD } ?? true
        return PostgresError(
            kind: kind ?? (broken ? .connection : .server), operation: operation,
            message: connection.map(lastMessage) ?? "no connection")
    }

    static func lastMessage(_ connection: OpaquePointer) -> String {
        PQerrorMessage(connection).map { String(cString: $0).trimmed } ?? ""
    }

    static func decoding(_ message: String, column: String? = nil) -> PostgresError {
        PostgresError(kind: .decoding, operation: "decode", message: message, column: column)
    }
}

extension String {
    var trimmed: String {
        var text = Substring(self)
        while let last = text.last, last.isWhitespace { text.removeLast() }
        return String(text)
    }
}
