/// The in-memory view of a small table the gateway already holds (`legal_documents`: the two
/// documents in effect): column checks, `eq.` filters, order, offset/limit, projection. Tables
/// of users' data are never filtered here: their queries go to the owning service's SQL.
enum PostgRESTTable {
    /// Applies `query` to `rows` of `table`, whose columns are `columns` (42703 for any other;
    /// PGRST100 for anything but `eq.` filters).
    static func apply(_ query: PostgRESTQuery, to rows: [[String: JSONValue]], table: String, columns: [String]) throws(PostgRESTError) -> [[String:
        JSONValue]]
    {
        let equalities = try query.equalities(table: table)
        for column in (query.select ?? []) + equalities.map(\.column) + query.order.map(\.column) where !columns.contains(column) {
            throw PostgRESTError(status: .badRequest, code: "42703", message: "column \(table).\(column) does not exist")
        }
        var result = rows.filter { row in
            equalities.allSatisfy { filter in text(row[filter.column]) == filter.value }
        }
        for order in query.order.reversed() {
            result.sort { a, b in
                let (x, y) = (text(a[order.column]), text(b[order.column]))
                return order.descending ? x > y : x < y
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
