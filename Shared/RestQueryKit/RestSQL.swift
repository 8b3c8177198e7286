import BusCore
import Foundation

/// Turns a ``RestQuery`` into the `WHERE`, `ORDER BY` and `LIMIT`/`OFFSET` of a parameterised
/// statement. SQL text comes only from the fixed map of column name to SQL expression the owning
/// service gives and from this file's own keywords; every value the client sent is a bind
/// parameter (`$n::type`), so no value can change the statement.
public struct RestSQL: Sendable {
    public let schema: RestTableSchema
    /// Column name → the SQL expression it reads (a column, or a fixed expression over columns).
    public let expressions: [String: String]

    public init(schema: RestTableSchema, expressions: [String: String]) {
        precondition(Set(expressions.keys) == Set(schema.columnNames), "every column of \(schema.name) needs exactly one SQL expression")
        self.schema = schema
        self.expressions = expressions
    }

    /// The parts of one statement: conditions to AND after the service's own (the owner filter),
    /// the sort keys, `LIMIT`/`OFFSET` with their parameters, and the values to bind, numbered
    /// from `firstParameter`.
    public struct Statement: Sendable, Equatable {
        /// `TRUE` when the query has no filter.
        public var condition: String
        /// Empty when the query has no order (the service appends its tiebreak either way).
        public var orderBy: [String]
        public var limitOffset: String
        public var parameters: [String]
    }

    /// The statement of `query`; `invalid_argument` (details `code`: PostgREST's code) for a
    /// query the schema refuses.
    public func statement(_ query: RestQuery, firstParameter: Int) throws -> Statement {
        do { try schema.validate(query) } catch {
            throw BusError(.invalidArgument, error.message, details: ["code": error.code])
        }
        var builder = Builder(next: firstParameter)
        let conditions = try query.filters.map { try sql($0, &builder) }
        let orderBy = try query.order.map { order in
            let expression = try self.expression(order.column)
            let nulls = order.nulls.map { $0 == .first ? " NULLS FIRST" : " NULLS LAST" } ?? ""
            return expression + (order.descending ? " DESC" : " ASC") + nulls
        }
        let limit = builder.bind(String(query.limit), as: "bigint")
        let offset = builder.bind(String(query.offset), as: "bigint")
        return Statement(
            condition: conditions.isEmpty ? "TRUE" : conditions.joined(separator: " AND "), orderBy: orderBy,
            limitOffset: "LIMIT \(limit) OFFSET \(offset)", parameters: builder.parameters)
    }

    struct Builder {
        var next: Int
        var parameters: [String] = []

        mutating func bind(_ value: String, as type: String) -> String {
            parameters.append(value)
            defer { next += 1 }
            return "$\(next)::\(type)"
        }
    }

    func expression(_ column: String) throws -> String {
        guard let expression = expressions[column] else {
            throw BusError(.invalidArgument, "column \(schema.name).\(column) does not exist", details: ["code": "42703"])
        }
        return expression
    }

    func sql(_ filter: RestFilter, _ builder: inout Builder) throws -> String {
        switch filter {
        case .condition(let condition):
            let text = try sql(condition, &builder)
            return condition.negated ? "NOT (\(text))" : "(\(text))"
        case .group(let group):
            let members = try group.members.map { try sql($0, &builder) }
            let joined =
                members.isEmpty
                ? (group.junction == .and ? "TRUE" : "FALSE")
                : members.joined(separator: group.junction == .and ? " AND " : " OR ")
            return group.negated ? "NOT (\(joined))" : "(\(joined))"
        }
    }

    func sql(_ condition: RestCondition, _ builder: inout Builder) throws -> String {
        let expression = try self.expression(condition.column)
        let type = try schema.column(condition.column).type
        let cast = Self.cast(type)
        func bound(_ value: String) -> String {
            builder.bind(type == .timestamp ? RestTimestamp.canonical(value) ?? value : value, as: cast)
        }
        switch condition.op {
        case .eq: return "\(expression) = \(bound(condition.values[0]))"
        case .neq: return "\(expression) <> \(bound(condition.values[0]))"
        case .gt: return "\(expression) > \(bound(condition.values[0]))"
        case .gte: return "\(expression) >= \(bound(condition.values[0]))"
        case .lt: return "\(expression) < \(bound(condition.values[0]))"
        case .lte: return "\(expression) <= \(bound(condition.values[0]))"
        case .like, .ilike:
            // PostgREST's `*` is SQL's `%`; the pattern itself is a parameter.
            let pattern = builder.bind(condition.values[0].replacingOccurrences(of: "*", with: "%"), as: "text")
            return "\(expression) \(condition.op == .like ? "LIKE" : "ILIKE") \(pattern)"
        case .in:
            guard !condition.values.isEmpty else { return "FALSE" }
            return "\(expression) IN (\(condition.values.map(bound).joined(separator: ", ")))"
        case .is:
            let test =
                switch condition.values[0] {
                case "null": "NULL"
                case "not_null": "NOT NULL"
                case "true": "TRUE"
                case "false": "FALSE"
                default: "UNKNOWN"
                }
            return "\(expression) IS \(test)"
        }
    }

    static func cast(_ type: RestColumnType) -> String {
        switch type {
        case .text: "text"
        case .uuid: "uuid"
        case .integer: "bigint"
        case .timestamp: "timestamptz"
        case .boolean: "boolean"
        }
    }
}
