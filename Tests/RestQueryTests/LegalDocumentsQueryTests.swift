import BusCore
import Contracts
import Foundation
import Postgres
import TestSupport
import Testing

@testable import RestQueryKit

/// `/rest/v1/legal_documents` runs its queries over the gateway's copy of the texts
/// (``InMemoryTable``); the other tables run theirs in their service's SQL (``RestSQL``). The
/// two must mean the same: every query here runs both ways over the same rows, the in-memory
/// evaluator against PostgreSQL itself (the deployment's `C.UTF-8` collation), and must select
/// the same rows in the same order and count the same total.
@Suite struct LegalDocumentsQueryTests {
    typealias Row = (
        id: String, type: String, version: String, content: String, lastUpdated: String, effectiveAt: String, sha: String?, material: Bool?
    )

    /// Nulls where the table has none today, so that `not.`, `or` and null order are exercised.
    static let rows: [Row] = [
        ("privacy_policy:1.0", "privacy_policy", "1.0", "# Privacy\n\nWe keep little.", "2025-12-12T00:00:00Z", "2025-12-12T00:00:00Z", "ab12", true),
        ("terms_of_service:1.0", "terms_of_service", "1.0", "# Terms", "2025-12-12T00:00:00.250Z", "2026-01-01T00:00:00Z", "cd34", false),
        (
            "terms_of_service:2.0-beta", "terms_of_service", "2.0-beta", "# Terms 100% _new_", "2026-03-01T10:30:00.123Z", "2026-03-02T00:00:00Z",
            nil, nil
        ),
        ("privacy_policy:1.1", "privacy_policy", "1.1", "# Privacy, Ünïcode", "2026-03-01T10:30:00.123Z", "2026-02-01T00:00:00Z", "AB12", false),
        ("privacy_policy:0.9", "privacy_policy", "0.9", "", "2025-01-01T00:00:00Z", "2025-01-01T00:00:00Z", "ef56", true),
    ]

    static let sql = RestSQL(
        schema: RestTables.legalDocuments,
        expressions: Dictionary(uniqueKeysWithValues: RestTables.legalDocuments.columnNames.map { ($0, $0) }))
    /// As the gateway serves the table: keyed by `id`, the tiebreak of every order.
    static let table = InMemoryTable(schema: RestTables.legalDocuments, key: "id")

    static func condition(_ column: String, _ op: RestOperator, _ values: String..., not negated: Bool = false) -> RestFilter {
        .condition(RestCondition(column, op, values, negated: negated))
    }

    static func group(_ junction: RestGroup.Junction, not negated: Bool = false, _ members: RestFilter...) -> RestFilter {
        .group(RestGroup(junction, negated: negated, members))
    }

    static let filters: [[RestFilter]] = [
        [], [condition("type", .eq, "terms_of_service")], [condition("version", .neq, "1.0")], [condition("version", .gt, "1.0")],
        [condition("version", .gte, "1.0")], [condition("version", .lt, "1.1")], [condition("version", .lte, "1.1")],
        [condition("last_updated", .eq, "2026-03-01 11:30:00.123+01:00")], [condition("last_updated", .gt, "2025-12-12")],
        [condition("last_updated", .lte, "2025-12-12T00:00:00.25Z")], [condition("effective_at", .lt, "2026-01-01T00:00:00-01")],
        [condition("requires_reacceptance", .eq, "true")], [condition("requires_reacceptance", .eq, "TRUE", not: true)],
        [condition("content_sha256", .eq, "ab12", not: true)], [condition("content", .like, "*100\\%*")], [condition("content", .like, "#*")],
        [condition("content", .ilike, "*PRIVACY*")], [condition("content", .like, "_ Terms")], [condition("content_sha256", .ilike, "ab*")],
        [condition("version", .like, "1._")], [condition("content", .like, "*")], [condition("content", .ilike, "*ünï*")],
        [condition("version", .in, "1.0", "2.0-beta", "x")], [condition("version", .in)], [condition("content_sha256", .in, "ab12", not: true)],
        [condition("content_sha256", .is, "null")], [condition("content_sha256", .is, "not_null")],
        [condition("requires_reacceptance", .is, "true")], [condition("requires_reacceptance", .is, "false")],
        [condition("requires_reacceptance", .is, "unknown")], [condition("requires_reacceptance", .is, "null", not: true)],
        [group(.or, condition("content_sha256", .eq, "ab12"), condition("requires_reacceptance", .is, "true"))],
        [group(.or, not: true, condition("content_sha256", .eq, "zz"), condition("version", .eq, "1.0"))],
        [group(.and, not: true, condition("content_sha256", .like, "*1*"), condition("requires_reacceptance", .eq, "false"))],
        [
            group(
                .or, group(.and, condition("type", .eq, "privacy_policy"), condition("version", .gte, "1.0")),
                group(.and, not: true, condition("content_sha256", .is, "not_null"), condition("type", .eq, "privacy_policy"))),
            condition("id", .neq, "privacy_policy:1.1"),
        ],
    ]

    static let orders: [[RestOrder]] = [
        [], [RestOrder("version")], [RestOrder("content_sha256")], [RestOrder("content_sha256", descending: true)],
        [RestOrder("content_sha256", nulls: .first)], [RestOrder("requires_reacceptance", descending: true, nulls: .last)],
        [RestOrder("last_updated", descending: true), RestOrder("version")], [RestOrder("content")], [RestOrder("type"), RestOrder("effective_at")],
    ]

    static let pages: [(limit: Int, offset: Int)] = [(RestQuery.maximumRows, 0), (2, 1), (0, 0), (3, 10)]

    @Test func theInMemoryEvaluatorSelectsWhatPostgreSQLSelects() async throws {
        try await TestDatabase.withSchema { schema in
            let table = "\(schema.name).legal_documents"  // a generated name: safe in DDL
            try await schema.pool.withConnection { db in
                try db.executeScript(
                    """
                    CREATE TABLE \(table) (id text PRIMARY KEY, type text NOT NULL, version text NOT NULL, content text NOT NULL,
                        last_updated timestamptz NOT NULL, effective_at timestamptz NOT NULL, content_sha256 text, requires_reacceptance boolean)
                    """)
                for row in Self.rows {
                    try db.execute(
                        "INSERT INTO \(table) VALUES ($1, $2, $3, $4, $5::timestamptz, $6::timestamptz, $7, $8::boolean)",
                        row.id, row.type, row.version, row.content, row.lastUpdated, row.effectiveAt, row.sha, row.material.map { String($0) })
                }
            }
            let memory: [[String: JSONValue]] = Self.rows.map { row in
                [
                    "id": .string(row.id), "type": .string(row.type), "version": .string(row.version), "content": .string(row.content),
                    "last_updated": .string(row.lastUpdated), "effective_at": .string(row.effectiveAt),
                    "content_sha256": row.sha.map(JSONValue.string) ?? .null, "requires_reacceptance": row.material.map(JSONValue.bool) ?? .null,
                ]
            }
            var compared = 0
            for filters in Self.filters {
                for order in Self.orders {
                    for page in Self.pages {
                        let query = RestQuery(filters: filters, order: order, limit: page.limit, offset: page.offset, count: true)
                        try RestTables.legalDocuments.validate(query)
                        let statement = try Self.sql.statement(query, firstParameter: 1)
                        let (ids, total) = try await schema.pool.withConnection { db in
                            let orderBy = (statement.orderBy + ["id ASC"]).joined(separator: ", ")
                            let ids = try db.query(
                                "SELECT id FROM \(table) WHERE \(statement.condition) ORDER BY \(orderBy) \(statement.limitOffset)",
                                parameters: statement.parameters
                            ).map { try $0.decode(String.self, column: 0) }
                            let total = try db.query(
                                "SELECT count(*)::bigint FROM \(table) WHERE \(statement.condition)",
                                parameters: Array(statement.parameters.dropLast(2))
                            )[0].decode(Int.self, column: 0)
                            return (ids, total)
                        }
                        let selected = Self.table.select(query, from: memory)
                        let memoryIds = selected.rows.map { row -> String in
                            if case .string(let id)? = row["id"] { return id }
                            return "?"
                        }
                        #expect(memoryIds == ids, "\(filters) ordered by \(order), \(page)")
                        #expect(selected.total == total, "\(filters): counted \(String(describing: selected.total)), PostgreSQL \(total)")
                        compared += 1
                    }
                }
            }
            #expect(compared == Self.filters.count * Self.orders.count * Self.pages.count)
        }
    }
}
