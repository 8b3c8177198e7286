import BusCore
import Contracts
import Testing

@testable import RestQueryKit

/// ``InMemoryTable``, the evaluator of `legal_documents`' queries, on rows made for it: pure, no
/// stack. Each expectation is what PostgreSQL answers to the SQL `RestSQL` makes of the query.
struct InMemoryTableTests {
    static let schema = RestTableSchema(
        name: "things",
        columns: [
            RestColumn("id", .text), RestColumn("name", .text), RestColumn("size", .integer), RestColumn("at", .timestamp),
            RestColumn("flag", .boolean),
        ])
    static let table = InMemoryTable(schema: schema, key: "id")
    static let rows: [[String: JSONValue]] = [
        ["id": .string("a"), "name": .string("Alpha"), "size": .int(10), "at": .string("2026-01-01T00:00:00Z"), "flag": .bool(true)],
        ["id": .string("b"), "name": .string("beta"), "size": .int(9), "at": .string("2026-01-01T00:00:00.500Z"), "flag": .bool(false)],
        ["id": .string("c"), "name": .null, "size": .int(100), "at": .string("2025-12-31T23:00:00Z"), "flag": .null],
    ]

    func ids(_ filters: [RestFilter] = [], order: [RestOrder] = [], limit: Int = RestQuery.maximumRows, offset: Int = 0) -> [String] {
        let query = RestQuery(filters: filters, order: order, limit: limit, offset: offset)
        return Self.table.select(query, from: Self.rows).rows.map { row in
            if case .string(let id)? = row["id"] { return id }
            return "?"
        }
    }

    func condition(_ column: String, _ op: RestOperator, _ values: String..., negated: Bool = false) -> RestFilter {
        .condition(RestCondition(column, op, values, negated: negated))
    }

    @Test func comparisonsFollowTheColumnsType() {
        // Numbers as numbers (10 > 9, where text would put "10" first), timestamps as instants
        // whatever zone or precision the value is written in, text by code point ("B" < "a").
        #expect(ids([condition("size", .gt, "9")]) == ["a", "c"])
        #expect(ids([condition("at", .eq, "2026-01-01T01:00:00+01:00")]) == ["a"])
        #expect(ids([condition("at", .gt, "2026-01-01")]) == ["b"])
        #expect(ids([condition("at", .lt, "2026-01-01T00:00:00.0005")]) == ["a", "c"])
        #expect(ids([condition("name", .lt, "B")]) == ["a"])
        #expect(ids([condition("id", .neq, "b")]) == ["a", "c"])
        #expect(ids([condition("flag", .eq, "false")]) == ["b"])
        #expect(ids([condition("id", .in, "c", "a", "z")]) == ["a", "c"])
        #expect(ids([condition("id", .in)]) == [])
    }

    @Test func nullsAreUnknownUnderNotAndOrAsInSQL() {
        // `name` of c is null: neither `eq` nor `not.eq` holds for it.
        #expect(ids([condition("name", .eq, "beta")]) == ["b"])
        #expect(ids([condition("name", .eq, "beta", negated: true)]) == ["a"])
        #expect(ids([condition("name", .is, "null")]) == ["c"])
        #expect(ids([condition("name", .is, "not_null")]) == ["a", "b"])
        #expect(ids([condition("flag", .is, "true")]) == ["a"])
        #expect(ids([condition("flag", .is, "unknown")]) == ["c"])
        // or(unknown, true) holds; not.or(unknown, false) is unknown, so it does not.
        #expect(ids([.group(RestGroup(.or, [condition("name", .eq, "x"), condition("size", .eq, "100")]))]) == ["c"])
        #expect(ids([.group(RestGroup(.or, negated: true, [condition("name", .eq, "x"), condition("size", .eq, "1")]))]) == ["a", "b"])
        #expect(ids([.group(RestGroup(.and, [condition("size", .gte, "9"), condition("size", .lte, "10")]))]) == ["a", "b"])
    }

    @Test func likePatternsAreSQLs() {
        #expect(ids([condition("name", .like, "*eta")]) == ["b"])
        #expect(ids([condition("name", .like, "alpha")]) == [])
        #expect(ids([condition("name", .ilike, "ALPHA")]) == ["a"])
        #expect(ids([condition("name", .like, "b_ta")]) == ["b"])
        #expect(ids([condition("name", .like, "%l%h%")]) == ["a"])
        #expect(InMemoryTable.LikePattern("100\\%", caseInsensitive: false).matches("100%"))
        #expect(!InMemoryTable.LikePattern("100\\%", caseInsensitive: false).matches("1000"))
        #expect(!InMemoryTable.LikePattern("a%b", caseInsensitive: false).matches("ab c"))
    }

    @Test func orderPutsNullsWherePostgreSQLDoesThenPages() {
        #expect(ids(order: [RestOrder("size")]) == ["b", "a", "c"])
        #expect(ids(order: [RestOrder("at", descending: true)]) == ["b", "a", "c"])
        // Nulls last ascending, first descending, unless the key says otherwise.
        #expect(ids(order: [RestOrder("name")]) == ["a", "b", "c"])
        #expect(ids(order: [RestOrder("name", descending: true)]) == ["c", "b", "a"])
        #expect(ids(order: [RestOrder("name", nulls: .first)]) == ["c", "a", "b"])
        // Ties fall back to the key.
        #expect(ids(order: [RestOrder("flag", descending: true, nulls: .last)]) == ["a", "b", "c"])
        #expect(ids(order: [RestOrder("size")], limit: 1, offset: 1) == ["a"])
        #expect(ids(order: [RestOrder("size")], offset: 5) == [])
    }

    @Test func countIsEveryMatchingRowWhateverThePage() {
        let counted = Self.table.select(RestQuery(filters: [condition("size", .lt, "50")], limit: 1, count: true), from: Self.rows)
        #expect(counted.rows.count == 1 && counted.total == 2)
        #expect(Self.table.select(RestQuery(limit: 1), from: Self.rows).total == nil)
    }

    @Test func timestampFiltersAreInstants() {
        let instant = { (text: String) -> Int64? in InMemoryTable.RestInstant.microseconds(text) }
        #expect(instant("1970-01-01T00:00:00Z") == 0)
        #expect(instant("1970-01-01") == 0)
        #expect(instant("1970-01-01 01:00+01") == 0)
        #expect(instant("1970-01-01T00:00:00.000001Z") == 1)
        #expect(instant("2000-03-01T00:00:00-0130") == Int64(951_868_800 + 5_400) * 1_000_000)
        #expect(instant("2024-02-29T12:00:00.5Z") == Int64(1_709_208_000) * 1_000_000 + 500_000)
        #expect(instant("yesterday") == nil)
    }
}
