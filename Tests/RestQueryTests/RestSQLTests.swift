import BusCore
import Contracts
import Testing

@testable import RestQueryKit

/// The SQL a PostgREST query becomes: text only from the column map and fixed keywords, every
/// value a bind parameter. Pure (the store tests run the SQL against PostgreSQL).
struct RestSQLTests {
    static let sql = RestSQL(
        schema: RestTables.legalAcceptances,
        expressions: [
            "id": "r.record_id", "user_id": "s.user_id", "document_type": "r.document_type", "version": "r.version",
            "action": "r.action", "accepted_at": "r.recorded_at", "content_sha256": "r.digest",
        ])

    @Test func everyOperatorBecomesItsSQLWithTypedParameters() throws {
        let query = RestQuery(
            filters: [
                .condition(.init("version", .eq, ["1.0"])), .condition(.init("version", .neq, ["2.0"], negated: true)),
                .condition(.init("accepted_at", .gte, ["2026-01-01"])), .condition(.init("accepted_at", .lt, ["2026-02-01T00:00:00.5Z"])),
                .condition(.init("content_sha256", .like, ["ab*"])), .condition(.init("version", .ilike, ["*X*"])),
                .condition(.init("action", .in, ["accept", "decline"])), .condition(.init("action", .in, [])),
                .condition(.init("version", .is, ["not_null"])),
                .group(
                    RestGroup(
                        .or, negated: true,
                        [
                            .condition(.init("document_type", .eq, ["terms_of_service"])),
                            .group(
                                RestGroup(
                                    .and,
                                    [
                                        .condition(.init("id", .eq, ["00000000-0000-0000-0000-000000000001"])),
                                        .condition(.init("version", .gt, ["0"])),
                                    ])),
                        ])),
            ], order: [RestOrder("accepted_at", descending: true, nulls: .last), RestOrder("version")], limit: 25, offset: 50, count: true)
        let statement = try Self.sql.statement(query, firstParameter: 2)
        #expect(
            statement.condition == """
                (r.version = $2::text) AND NOT (r.version <> $3::text) AND (r.recorded_at >= $4::timestamptz) AND \
                (r.recorded_at < $5::timestamptz) AND (r.digest LIKE $6::text) AND (r.version ILIKE $7::text) AND \
                (r.action IN ($8::text, $9::text)) AND (FALSE) AND (r.version IS NOT NULL) AND \
                NOT ((r.document_type = $10::text) OR ((r.record_id = $11::uuid) AND (r.version > $12::text)))
                """)
        #expect(statement.orderBy == ["r.recorded_at DESC NULLS LAST", "r.version ASC"])
        #expect(statement.limitOffset == "LIMIT $13::bigint OFFSET $14::bigint")
        #expect(
            statement.parameters == [
                "1.0", "2.0", "2026-01-01T00:00:00Z", "2026-02-01T00:00:00.5Z", "ab%", "%X%", "accept", "decline", "terms_of_service",
                "00000000-0000-0000-0000-000000000001", "0", "25", "50",
            ])
        #expect(try Self.sql.statement(RestQuery(), firstParameter: 2).condition == "TRUE")
    }

    /// Whatever a value holds, the SQL text is the same as for a harmless value: only the
    /// parameters differ, and they carry the hostile text unchanged.
    @Test func hostileValuesCannotChangeTheSQL() throws {
        let hostile = [
            "'; DROP TABLE audit.records; --", "1' OR '1'='1", "\\'; SELECT pg_sleep(10); --", "$1", "$$ || $$", "\u{0}", "a\"b)c,d",
            "' UNION SELECT secret FROM audit.subjects --", "*/ OR TRUE /*", String(repeating: "'", count: 1000),
        ]
        func statement(_ value: String) throws -> RestSQL.Statement {
            try Self.sql.statement(
                RestQuery(filters: [
                    .condition(.init("version", .eq, [value])), .condition(.init("version", .like, [value])),
                    .group(
                        RestGroup(.or, [.condition(.init("content_sha256", .in, [value, value])), .condition(.init("version", .ilike, [value]))])),
                ]), firstParameter: 2)
        }
        let harmless = try statement("x")
        for value in hostile {
            let attacked = try statement(value)
            #expect(attacked.condition == harmless.condition && attacked.orderBy == harmless.orderBy && attacked.limitOffset == harmless.limitOffset)
            #expect(!attacked.condition.contains(value))
            #expect(attacked.parameters[0] == value && attacked.parameters[2] == value && attacked.parameters[3] == value)
        }
    }

    /// Column names reach SQL only through the map: anything else is refused before SQL is made,
    /// whoever sent the query (the service checks again what the gateway checked).
    @Test func unknownColumnsAndBadValuesAreRefusedWithPostgRESTCodes() {
        func code(_ query: RestQuery) -> String? {
            do {
                _ = try Self.sql.statement(query, firstParameter: 2)
                return nil
            } catch let error as BusError {
                #expect(error.code == .invalidArgument)
                return error.details?["code"]
            } catch { return "unexpected \(error)" }
        }
        #expect(code(RestQuery(filters: [.condition(.init("version; DROP TABLE x", .eq, ["1"]))])) == "42703")
        #expect(code(RestQuery(order: [RestOrder("r.secret")])) == "42703")
        #expect(code(RestQuery(filters: [.condition(.init("accepted_at", .gt, ["now()"]))])) == "22P02")
        #expect(code(RestQuery(filters: [.condition(.init("id", .eq, ["1 OR 1=1"]))])) == "22P02")
        #expect(code(RestQuery(filters: [.condition(.init("id", .like, ["a*"]))])) == "42883")
        #expect(code(RestQuery(limit: RestQuery.maximumRows + 1)) == "PGRST100")
        #expect(code(RestQuery(offset: -1)) == "PGRST100")
        var deep = RestFilter.condition(.init("version", .eq, ["1"]))
        for _ in 0...RestQuery.maximumDepth { deep = .group(RestGroup(.or, [deep])) }
        #expect(code(RestQuery(filters: [deep])) == "PGRST100")
    }
}
