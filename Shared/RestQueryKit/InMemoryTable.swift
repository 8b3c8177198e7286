import BusCore
import Foundation

/// A ``RestQuery`` run over rows the gateway already holds (`legal_documents`: the texts in
/// effect), with the meaning the owning services' SQL gives the same query (``RestSQL``):
/// typed comparisons (timestamps as instants, booleans, numbers), SQL's three-valued logic for
/// nulls under `not.`, `or` and `and`, `like`/`ilike` patterns, PostgreSQL's default null order,
/// then the table's key as the tiebreak, `offset`/`limit`, and the count of every matching row.
/// The query was checked against ``schema`` before it gets here (``PostgRESTQuery/restQuery(for:range:count:)``).
/// Tables of users' data are never filtered here: their queries go to the owning service's SQL.
package struct InMemoryTable: Sendable {
    let schema: RestTableSchema
    /// The column that orders rows the query's `order` leaves tied (the table's primary key).
    let key: String

    package init(schema: RestTableSchema, key: String) {
        self.schema = schema
        self.key = key
    }

    /// The rows of `rows` that `query` selects, and how many match in all when it asks to count.
    package func select(_ query: RestQuery, from rows: [[String: JSONValue]]) -> (rows: [[String: JSONValue]], total: Int?) {
        let matching = rows.filter { row in query.filters.allSatisfy { holds($0, in: row) == true } }
        let ordered = matching.sorted { a, b in precedes(a, b, order: query.order) }
        return (Array(ordered.dropFirst(query.offset).prefix(query.limit)), query.count ? matching.count : nil)
    }

    /// True, false, or nil for SQL's unknown (a comparison with null), which `not.` leaves unknown.
    func holds(_ filter: RestFilter, in row: [String: JSONValue]) -> Bool? {
        switch filter {
        case .condition(let condition):
            let result = holds(condition, in: row)
            return condition.negated ? result.map { !$0 } : result
        case .group(let group):
            let results = group.members.map { holds($0, in: row) }
            let decisive = group.junction == .or
            let result: Bool? = results.contains(decisive) ? decisive : results.contains(nil) ? nil : !decisive
            return group.negated ? result.map { !$0 } : result
        }
    }

    func holds(_ condition: RestCondition, in row: [String: JSONValue]) -> Bool? {
        let type = (try? schema.column(condition.column))?.type ?? .text
        let value = SQLValue(row[condition.column], type)
        func compared(_ text: String, _ test: (ComparisonResult) -> Bool) -> Bool? {
            SQLValue.compare(value, SQLValue(text, type)).map(test)
        }
        switch condition.op {
        case .eq: return compared(condition.values[0]) { $0 == .orderedSame }
        case .neq: return compared(condition.values[0]) { $0 != .orderedSame }
        case .gt: return compared(condition.values[0]) { $0 == .orderedDescending }
        case .gte: return compared(condition.values[0]) { $0 != .orderedAscending }
        case .lt: return compared(condition.values[0]) { $0 == .orderedAscending }
        case .lte: return compared(condition.values[0]) { $0 != .orderedDescending }
        case .like, .ilike:
            guard case .text(let text) = value else { return nil }
            return LikePattern(condition.values[0], caseInsensitive: condition.op == .ilike).matches(text)
        case .in:
            if condition.values.isEmpty { return false }
            if value == .null { return nil }
            return condition.values.contains { compared($0) { $0 == .orderedSame } == true }
        case .is:
            switch condition.values[0] {
            case "null", "unknown": return value == .null
            case "not_null": return value != .null
            default: return value == .bool(condition.values[0] == "true")
            }
        }
    }

    /// Whether `a` sorts before `b`: the query's keys (nulls last ascending and first descending
    /// unless the key says otherwise, as PostgreSQL), then ``key`` ascending.
    func precedes(_ a: [String: JSONValue], _ b: [String: JSONValue], order: [RestOrder]) -> Bool {
        for order in order + [RestOrder(key)] {
            let type = (try? schema.column(order.column))?.type ?? .text
            let (x, y) = (SQLValue(a[order.column], type), SQLValue(b[order.column], type))
            if x == .null || y == .null {
                if x == y { continue }
                let nullsFirst = order.nulls.map { $0 == .first } ?? order.descending
                return (x == .null) == nullsFirst
            }
            switch SQLValue.compare(x, y) {
            case .orderedAscending?: return !order.descending
            case .orderedDescending?: return order.descending
            default: continue
            }
        }
        return false
    }
}
