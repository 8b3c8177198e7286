import Foundation
import Postgres
import TestSupport
import Testing

/// `PostgresArrayLiteral`: any text, quotes and backslashes included, comes back from
/// `unnest($1::text[])` exactly as sent; nil as NULL.
@Suite("Array literals")
struct ArrayLiteralTests {
    @Test func anyTextRoundTripsThroughUnnest() async throws {
        let values: [String?] = ["plain", "with,comma", "with \"quotes\"", "back\\slash", "{braces}", "", "NULL", nil, "é ✓", "🏈\"\\ e\u{301}"]
        try await TestDatabase.withSchema { db in
            let read = try await db.pool.withConnection { c in
                try c.query("SELECT v FROM unnest($1::text[]) WITH ORDINALITY AS t(v, n) ORDER BY n", PostgresArrayLiteral.of(values))
                    .map { try $0.decode(String?.self, column: 0) }
            }
            #expect(read == values)
        }
    }

    @Test func byteaValuesRoundTripThroughUnnest() async throws {
        let values: [[UInt8]?] = [[0, 1, 0x5c, 0x22, 0xff], [], nil, Array(0...255)]
        try await TestDatabase.withSchema { db in
            let read = try await db.pool.withConnection { c in
                try c.query("SELECT v FROM unnest($1::bytea[]) WITH ORDINALITY AS t(v, n) ORDER BY n", PostgresArrayLiteral.of(bytea: values))
                    .map { try $0.decode([UInt8]?.self, column: 0) }
            }
            #expect(read == values)
        }
    }
}
