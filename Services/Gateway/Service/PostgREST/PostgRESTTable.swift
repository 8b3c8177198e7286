/// What the gateway's PostgREST views share: a query applied to rows already fetched for the
/// caller (column checks, `eq.` filters, order, offset/limit, projection).
enum PostgRESTTable {
    /// Applies `query` to `rows` of `table`, whose columns are `columns` (42703 for any other).
    static func apply(_ query: PostgRESTQuery, to rows: [[String: JSONValue]], table: String, columns: [String]) throws(PostgRESTError) -> [[String: JSONValue]] {
        for column in (query.select ?? []) + query.filters.map(\.column) + query.order.map(\.column) where !columns.contains(column) {
            throw PostgRESTError(status: .badRequest, code: "42703", message: "column \(table).\(column) does not exist")
        }
        var result = rows.filter { row in
            query.filters.allSatisfy { filter in text(row[filter.column]) == filter.value }
        }
        for (column, ascending) in query.order.reversed() {
            result.sort { a, b in
                let (x, y) = (text(a[column]), text(b[column]))
                return ascending ? x < y : x > y
            }
        }
        result = Array(result.dropFirst(query.offset))
        if let limit = query.limit { result = Array(result.prefix(limit)) }
        if let select = query.select {
            result = result.map { row in row.filter { select.contains($0.key) } }
        }
        return result
    }

    static func text(_ value: JSONValue?) -> String {
        switch value {
        case .string(let text): text
        case .bool(let flag): flag ? "true" : "false"
        case .int(let number): String(number)
        default: ""
        }
    }
}
