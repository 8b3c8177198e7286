import Foundation
import Postgres
import TestSupport
import Testing

@Suite("COPY FROM STDIN")
struct CopyTests {
    static let tricky = "tab\there, newline\nthere, back\\slash, \\N not null, Zoë"

    static func row(_ id: Int) -> [(any PostgresEncodable)?] {
        let label: String = id == 7 ? tricky : "row \(id)"
        let note: String? = id % 10 == 0 ? nil : "n"
        let raw: [UInt8] = [UInt8(id % 256), 0, 92]
        return [id, label, note, raw, Date(timeIntervalSince1970: Double(id))]
    }

    @Test("100k rows with escapes, NULLs and bytea")
    func copyRows() async throws {
        try await TestDatabase.withSchema { db in
            let tricky = Self.tricky
            let (copied, count, sum, nulls, stored, raw) = try await db.pool.withConnection { c in
                try c.executeScript("CREATE TABLE rows (id bigint, label text, note text, raw bytea, at timestamptz)")
                let copied = try c.copyIn("COPY rows (id, label, note, raw, at) FROM STDIN", rows: (1...100_000).lazy.map(Self.row))
                let summary = try c.query(
                    "SELECT count(*), sum(id)::bigint, count(*) FILTER (WHERE note IS NULL) FROM rows")[0]
                    .decode(Int.self, Int.self, Int.self)
                let seven = try c.query("SELECT label, raw FROM rows WHERE id = 7")[0].decode(String.self, [UInt8].self)
                return (copied, summary.0, summary.1, summary.2, seven.0, seven.1)
            }
            #expect(copied == 100_000)
            #expect(count == 100_000)
            #expect(sum == 100_000 * 100_001 / 2)
            #expect(nulls == 10_000)
            #expect(stored == tricky)
            #expect(raw == [7, 0, 92])
        }
    }

    @Test("typed fields store exactly what boxed rows store: escapes, NULLs, bytea, uuids, negative numbers")
    func typedFieldsMatchBoxedRows() async throws {
        try await TestDatabase.withSchema { db in
            let ids = [UUID(), UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0))]
            let rows: [(Int64, UUID, String?, [UInt8]?)] = [
                (-9_223_372_036_854_775_808, ids[0], Self.tricky, [0, 92, 255]), (0, ids[1], nil, nil), (42, ids[0], "", []),
            ]
            let stored = try await db.pool.withConnection { c in
                try c.executeScript("CREATE TABLE typed (way text, n bigint, id uuid, label text, raw bytea)")
                try c.copyIn("COPY typed FROM STDIN") { writer in
                    for row in rows {
                        writer.field("typed")
                        writer.field(row.0)
                        writer.field(row.1)
                        writer.field(row.2)
                        writer.field(bytea: row.3)
                        try writer.endRow()
                    }
                }
                try c.copyIn("COPY typed FROM STDIN", rows: rows.map { ["boxed", $0.0, $0.1, $0.2, $0.3] })
                return try c.query(
                    """
                    SELECT count(*) FILTER (WHERE way = 'typed'),
                           (SELECT count(*) FROM (SELECT n, id, label, raw FROM typed WHERE way = 'typed'
                                                  EXCEPT SELECT n, id, label, raw FROM typed WHERE way = 'boxed') d),
                           count(*) FILTER (WHERE way = 'typed' AND label IS NULL AND raw IS NULL),
                           (SELECT label FROM typed WHERE way = 'typed' AND n < 0)
                    FROM typed
                    """)[0].decode(Int.self, Int.self, Int.self, String.self)
            }
            #expect(stored.0 == 3 && stored.1 == 0 && stored.2 == 1 && stored.3 == Self.tricky)
        }
    }

    @Test("raw CSV bytes; a failing body cancels the COPY; bad data is a server error and the connection survives")
    func copyFailures() async throws {
        struct Stop: Error {}
        try await TestDatabase.withSchema(maxConnections: 1) { db in
            let copied = try await db.pool.withConnection { c in
                try c.executeScript("CREATE TABLE t (id int, name text)")
                return try c.copyIn("COPY t FROM STDIN (FORMAT csv)") { writer in
                    try writer.write(Array("1,\"a, b\"\n2,c\n".utf8))
                }
            }
            #expect(copied == 2)
            await #expect(throws: Stop.self) {
                try await db.pool.withConnection { c in
                    try c.copyIn("COPY t FROM STDIN") { writer in
                        try writer.writeRow([3, "never"])
                        throw Stop()
                    }
                }
            }
            let bad = await #expect(throws: PostgresError.self) {
                try await db.pool.withConnection { c in
                    try c.copyIn("COPY t FROM STDIN", rows: [["not a number", "x"]])
                }
            }
            #expect(bad?.sqlState == "22P02")
            let notCopy = await #expect(throws: PostgresError.self) {
                try await db.pool.withConnection { c in try c.copyIn("SELECT 1") { _ in } }
            }
            #expect(notCopy?.kind == .usage)
            let names = try await db.pool.withConnection { c in
                try c.query("SELECT name FROM t ORDER BY id").map { try $0.decode(String.self, column: 0) }
            }
            #expect(names == ["a, b", "c"])
        }
    }
}
