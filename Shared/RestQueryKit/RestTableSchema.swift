import Foundation

/// How a column's values compare: what a filter value must parse as, and how `order=` sorts
/// (timestamps as time, numbers as numbers, text as text).
public enum RestColumnType: String, Codable, Sendable {
    case text, uuid, integer, timestamp, boolean
}

/// One column a table shows through `/rest/v1`.
public struct RestColumn: Sendable, Equatable {
    public var name: String
    public var type: RestColumnType
    /// For enum-like text columns: the values it can hold, and the enum's name for the error
    /// (`invalid input value for enum document_type`), as PostgreSQL would refuse another.
    public var allowedValues: [String]?
    public var enumName: String?

    public init(_ name: String, _ type: RestColumnType, allowedValues: [String]? = nil, enumName: String? = nil) {
        self.name = name
        self.type = type
        self.allowedValues = allowedValues
        self.enumName = enumName
    }
}

/// Why a query cannot run, in PostgREST's terms (its `code`, `message`, `details`, `hint` and
/// HTTP status), so the gateway answers exactly what a PostgREST would.
public struct RestQueryError: Error, Sendable, Equatable {
    public var status: Int
    public var code: String
    public var message: String
    public var details: String?
    public var hint: String?

    public init(status: Int = 400, code: String, message: String, details: String? = nil, hint: String? = nil) {
        self.status = status
        self.code = code
        self.message = message
        self.details = details
        self.hint = hint
    }
}

/// A table's columns as `/rest/v1` shows them: the gateway checks every `select`, filter and
/// `order` against it, and the owning service checks the query again before making SQL.
public struct RestTableSchema: Sendable {
    public var name: String
    public var columns: [RestColumn]

    public init(name: String, columns: [RestColumn]) {
        self.name = name
        self.columns = columns
    }

    public var columnNames: [String] { columns.map(\.name) }

    public func column(_ name: String) throws(RestQueryError) -> RestColumn {
        guard let column = columns.first(where: { $0.name == name }) else {
            throw RestQueryError(code: "42703", message: "column \(self.name).\(name) does not exist")
        }
        return column
    }

    /// Checks columns, operators against column types, values against types, sizes and depth.
    public func validate(_ query: RestQuery) throws(RestQueryError) {
        guard query.limit >= 0, query.limit <= RestQuery.maximumRows, query.offset >= 0 else {
            throw RestQueryError(code: "PGRST100", message: "limit must be 0 to \(RestQuery.maximumRows) and offset not negative")
        }
        for order in query.order { _ = try column(order.column) }
        var count = 0
        for filter in query.filters {
            guard filter.depth <= RestQuery.maximumDepth else {
                throw RestQueryError(code: "PGRST100", message: "logic tree nested deeper than \(RestQuery.maximumDepth) levels")
            }
            for condition in filter.conditions {
                count += max(1, condition.values.count)
                try validate(condition)
            }
        }
        guard count <= RestQuery.maximumValues else {
            throw RestQueryError(code: "PGRST100", message: "a query may hold at most \(RestQuery.maximumValues) filter values")
        }
    }

    func validate(_ condition: RestCondition) throws(RestQueryError) {
        let column = try column(condition.column)
        switch condition.op {
        case .is:
            guard condition.values.count == 1, let value = condition.values.first else {
                throw RestQueryError(code: "PGRST100", message: "failed to parse filter (is)")
            }
            switch value {
            case "null", "not_null": break
            case "true", "false", "unknown":
                guard column.type == .boolean else {
                    throw RestQueryError(
                        code: "42804", message: "argument of IS \(value.uppercased()) must be type boolean, not type of column \(column.name)")
                }
            default:
                throw RestQueryError(
                    code: "PGRST100", message: "failed to parse filter (is.\(value))", details: "is. takes null, not_null, true, false or unknown")
            }
        case .like, .ilike:
            guard column.type == .text else {
                throw RestQueryError(
                    status: 404, code: "42883", message: "operator does not exist: \(column.type.rawValue) ~~ unknown",
                    hint: "like and ilike apply to text columns")
            }
            guard condition.values.count == 1 else {
                throw RestQueryError(code: "PGRST100", message: "failed to parse filter (\(condition.op.rawValue))")
            }
        case .in:
            for value in condition.values { try check(value, of: column) }
        default:
            guard condition.values.count == 1, let value = condition.values.first else {
                throw RestQueryError(code: "PGRST100", message: "failed to parse filter (\(condition.op.rawValue))")
            }
            try check(value, of: column)
        }
    }

    /// 22P02 (PostgreSQL's `invalid_text_representation`) for a value the column's type cannot hold.
    func check(_ value: String, of column: RestColumn) throws(RestQueryError) {
        let valid: Bool
        let typeName: String
        switch column.type {
        case .text:
            valid = column.allowedValues?.contains(value) ?? true
            typeName = column.enumName.map { "enum \($0)" } ?? "text"
            if !valid {
                throw RestQueryError(code: "22P02", message: "invalid input value for \(typeName): \"\(value)\"")
            }
            return
        case .uuid:
            (valid, typeName) = (UUID(uuidString: value) != nil, "uuid")
        case .integer:
            (valid, typeName) = (Int64(value) != nil, "bigint")
        case .boolean:
            (valid, typeName) = (["true", "false"].contains(value.lowercased()), "boolean")
        case .timestamp:
            (valid, typeName) = (RestTimestamp.canonical(value) != nil, "timestamp with time zone")
        }
        guard valid else { throw RestQueryError(code: "22P02", message: "invalid input syntax for type \(typeName): \"\(value)\"") }
    }
}

/// The timestamps a filter may compare with: ISO 8601 as Supabase clients and PostgreSQL print
/// them (`2026-01-15T00:00:00Z`, up to six fractional digits, `Z` or an offset, a space for the
/// `T`) or a date (`2026-01-15`). Without a zone the time is UTC (the database's zone). Anything
/// else is 22P02 before it reaches SQL.
public enum RestTimestamp {
    /// The text SQL binds (`timestamptz`) for an accepted value, nil for any other.
    public static func canonical(_ text: String) -> String? {
        guard text.count <= 40 else { return nil }
        let characters = Array(text.utf8)
        var index = 0
        func digits(_ count: Int) -> Int? {
            guard index + count <= characters.count else { return nil }
            var value = 0
            for byte in characters[index..<index + count] {
                guard (48...57).contains(byte) else { return nil }
                value = value * 10 + Int(byte - 48)
            }
            index += count
            return value
        }
        func take(_ character: UInt8) -> Bool {
            guard index < characters.count, characters[index] == character else { return false }
            index += 1
            return true
        }
        guard digits(4) != nil, take(45), let month = digits(2), (1...12).contains(month), take(45), let day = digits(2), (1...31).contains(day)
        else { return nil }
        if index == characters.count { return text + "T00:00:00Z" }
        guard take(84) || take(32), let hour = digits(2), hour < 24, take(58), let minute = digits(2), minute < 60 else { return nil }
        if take(58) {
            guard let second = digits(2), second <= 60 else { return nil }
            if take(46) {
                var fraction = 0
                while fraction < 6, digits(1) != nil { fraction += 1 }
                guard fraction > 0 else { return nil }
            }
        }
        let normalized = text.replacingOccurrences(of: " ", with: "T")
        if index == characters.count { return normalized + "Z" }
        if take(90) { return index == characters.count ? normalized : nil }
        guard take(43) || take(45), let zoneHour = digits(2), zoneHour < 16 else { return nil }
        if index == characters.count { return normalized }
        _ = take(58)
        guard let zoneMinute = digits(2), zoneMinute < 60, index == characters.count else { return nil }
        return normalized
    }
}
