import Foundation
import Postgres
import TestSupport
import Testing

@Suite("Typed round trips")
struct TypeRoundTripTests {
    struct Profile: Codable, Equatable {
        var name: String
        var tags: [String]
        var score: Double
    }

    @Test("every supported type survives a table round trip, NULLs included")
    func tableRoundTrip() async throws {
        try await TestDatabase.withSchema { db in
            let id = UUID()
            let when = Date(timeIntervalSince1970: 1_700_000_000.123456)
            let bytes = (0...255).map { UInt8($0) }
            let profile = Profile(name: "Zoë", tags: ["a", "日本語"], score: 4.5)
            let text = "Zoë ✓ 日本語 🚀 \"quoted\" 'single' \\ back\tslash\nnewline"
            let row = try await db.pool.withConnection { c in
                try c.executeScript(
                    """
                    CREATE TABLE everything (
                        t text, i integer, s smallint, b bigint, f boolean, u uuid, ts timestamptz,
                        raw bytea, doc jsonb, ip inet, d double precision
                    )
                    """)
                let inserted = try c.execute(
                    "INSERT INTO everything VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11), "
                        + "(NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL)",
                    text, Int32(-2_147_483_648), Int16(32767), Int64.max, true, id, when, bytes,
                    try PostgresJSONB(encoding: profile), PostgresInet("2001:db8::1"), -0.1)
                #expect(inserted == 2)
                let rows = try c.query("SELECT * FROM everything ORDER BY t NULLS LAST")
                return try (
                    rows[0].decode(String.self, column: "t"), rows[0].decode(Int32.self, column: "i"),
                    rows[0].decode(Int16.self, column: "s"), rows[0].decode(Int64.self, column: "b"),
                    rows[0].decode(Bool.self, column: "f"), rows[0].decode(UUID.self, column: "u"),
                    rows[0].decode(Date.self, column: "ts"), rows[0].decode([UInt8].self, column: "raw"),
                    rows[0].decode(PostgresJSONB.self, column: "doc"),
                    rows[0].decode(PostgresInet.self, column: "ip"), rows[0].decode(Double.self, column: "d"),
                    rows[1].decode(String?.self, column: "t"), rows[1].decode(Int?.self, column: "i"),
                    rows[1].decode(UUID?.self, column: "u"), rows[1].decode(Date?.self, column: "ts"),
                    rows[1].decode(Data?.self, column: "raw"), rows[1].decode(PostgresJSONB?.self, column: "doc"),
                    rows[1].decode(PostgresInet?.self, column: "ip"), rows[1].decode(Double?.self, column: "d"),
                    rows[1].decode(Bool?.self, column: "f"), rows[1].decode(Int16?.self, column: "s")
                )
            }
            #expect(row.0 == text)
            #expect(row.1 == Int32.min)
            #expect(row.2 == Int16.max)
            #expect(row.3 == Int64.max)
            #expect(row.4 == true)
            #expect(row.5 == id)
            #expect(abs(row.6.timeIntervalSince(when)) < 0.000_001)
            #expect(row.7 == bytes)
            #expect(try row.8.decode(Profile.self) == profile)
            #expect(row.9.description == "2001:db8::1")
            #expect(row.10 == -0.1)
            #expect(row.11 == nil && row.12 == nil && row.13 == nil && row.14 == nil && row.15 == nil)
            #expect(row.16 == nil && row.17 == nil && row.18 == nil && row.19 == nil && row.20 == nil)
        }
    }

    @Test("timestamptz keeps microseconds, before and after 1970 and 2000")
    func timestamps() async throws {
        try await TestDatabase.withSchema { db in
            let cases: [(Double, String)] = [
                (1_700_000_000.123456, "2023-11-14 22:13:20.123456"),
                (-1.5, "1969-12-31 23:59:58.500000"),
                (946_684_799.999999, "1999-12-31 23:59:59.999999"),
                (0, "1970-01-01 00:00:00.000000"),
            ]
            for (seconds, expected) in cases {
                let date = Date(timeIntervalSince1970: seconds)
                let (text, back) = try await db.pool.withConnection { c in
                    try c.query(
                        "SELECT to_char($1 AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS.US'), $1", date
                    )[0].decode(String.self, Date.self)
                }
                #expect(text == expected)
                #expect(abs(back.timeIntervalSince1970 - seconds) < 0.000_001)
            }
            let infinite = try await db.pool.withConnection { c in
                try c.query("SELECT 'infinity'::timestamptz, '-infinity'::timestamptz")[0].decode(Date.self, Date.self)
            }
            #expect(infinite.0 == .distantFuture && infinite.1 == .distantPast)
        }
    }

    @Test("numbers: integer widths, doubles with special values")
    func numbers() async throws {
        try await TestDatabase.withSchema { db in
            let doubles: [Double] = [0, -0.1, 3.141592653589793, 1e-300, 1.7976931348623157e308, .infinity, -.infinity]
            for value in doubles {
                let back = try await db.pool.withConnection { c in try c.query("SELECT $1", value)[0].decode(Double.self, column: 0) }
                #expect(back == value)
            }
            let nan = try await db.pool.withConnection { c in try c.query("SELECT $1", Double.nan)[0].decode(Double.self, column: 0) }
            #expect(nan.isNaN)
            let ints = try await db.pool.withConnection { c in
                try c.query("SELECT 7::smallint, 8::integer, 9::bigint, $1, $2::int", Int.min, Int32(-5))[0]
                    .decode(Int.self, Int.self, Int.self, Int.self, Int32.self)
            }
            #expect(ints.0 == 7 && ints.1 == 8 && ints.2 == 9 && ints.3 == Int.min && ints.4 == -5)
            // Narrowing that does not fit is an error, not a silent truncation.
            let error = await #expect(throws: PostgresError.self) {
                try await db.pool.withConnection { c in try c.query("SELECT 70000")[0].decode(Int16.self, column: 0) }
            }
            #expect(error?.kind == .decoding)
        }
    }

    @Test("inet values of both families, with prefixes")
    func inet() async throws {
        try await TestDatabase.withSchema { db in
            for text in ["192.0.2.1", "10.0.0.0/8", "2001:db8::1", "2001:db8::/32", "::1"] {
                let parsed = try #require(PostgresInet(text))
                let (back, serverText) = try await db.pool.withConnection { c in
                    try c.query("SELECT $1, $1::text", parsed)[0].decode(PostgresInet.self, String.self)
                }
                #expect(back == parsed)
                #expect(back.description == text)
                #expect(serverText.hasPrefix(text))
            }
            #expect(PostgresInet("not an address") == nil)
            #expect(PostgresInet("10.0.0.1/33") == nil)
        }
    }

    @Test("bytea: empty is not NULL, Data and [UInt8] agree")
    func bytea() async throws {
        try await TestDatabase.withSchema { db in
            let (empty, isNull, data) = try await db.pool.withConnection { c in
                try c.query("SELECT $1, $1 IS NULL, $2", [UInt8](), Data([1, 2, 3]))[0]
                    .decode([UInt8]?.self, Bool.self, Data.self)
            }
            #expect(empty == [])
            #expect(isNull == false)
            #expect(data == Data([1, 2, 3]))
        }
    }

    @Test("jsonb as raw text and through Codable; String reads json and jsonb")
    func jsonb() async throws {
        try await TestDatabase.withSchema { db in
            let (raw, asString, field) = try await db.pool.withConnection { c in
                try c.query(
                    "SELECT $1::jsonb, $1::jsonb, ($1::jsonb)->>'name'", #"{"name": "Zoë", "n": [1, 2]}"#
                )[0].decode(PostgresJSONB.self, String.self, String.self)
            }
            #expect(raw.text == #"{"n": [1, 2], "name": "Zoë"}"#)
            #expect(asString == raw.text)
            #expect(field == "Zoë")
        }
    }
}
