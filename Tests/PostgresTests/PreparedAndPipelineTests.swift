import Postgres
import TestSupport
import Testing

@Suite("Prepared statements and pipeline mode")
struct PreparedAndPipelineTests {
    static let insert = PostgresStatement(name: "insert_item", sql: "INSERT INTO items (id, label) VALUES ($1, $2)")
    static let find = PostgresStatement(name: "find_item", sql: "SELECT label FROM items WHERE id = $1")

    @Test("a statement is prepared once per connection and reused")
    func prepared() async throws {
        try await TestDatabase.withSchema(maxConnections: 1) { db in
            let (labels, preparedCount) = try await db.pool.withConnection { c in
                try c.executeScript("CREATE TABLE items (id int PRIMARY KEY, label text)")
                for id in 1...5 { try c.execute(Self.insert, id, "item \(id)") }
                let labels = try (1...5).map { try c.query(Self.find, $0)[0].decode(String.self, column: 0) }
                let count = try c.query(
                    "SELECT count(*) FROM pg_prepared_statements WHERE name IN ($1, $2)",
                    Self.insert.name, Self.find.name)[0].decode(Int.self, column: 0)
                return (labels, count)
            }
            #expect(labels == (1...5).map { "item \($0)" })
            #expect(preparedCount == 2)
            // The same pooled connection keeps them: no "already exists" error on reuse.
            let again = try await db.pool.withConnection { c in
                try c.prepare(name: "plain", sql: "SELECT $1::int * 2")
                try c.prepare(Self.find)
                return try c.executePrepared(name: "plain", parameters: [21])[0].decode(Int.self, column: 0)
            }
            #expect(again == 42)
        }
    }

    @Test("pipeline: independent calls, one failure does not affect the others")
    func pipelineWithFailure() async throws {
        try await TestDatabase.withSchema { db in
            let (results, count) = try await db.pool.withConnection { c in
                try c.executeScript("CREATE TABLE items (id int PRIMARY KEY, label text)")
                var calls = (1...1000).map { (id: Int) in PipelineCall(Self.insert, [id, "label \(id)"]) }
                calls.insert(PipelineCall(Self.insert, [500, "duplicate"]), at: 700)
                calls.append(PipelineCall(sql: "SELECT count(*) FROM items WHERE id <= $1", [10]))
                let results = try c.pipeline(calls)
                return (results, try c.query("SELECT count(*) FROM items")[0].decode(Int.self, column: 0))
            }
            #expect(results.count == 1002)
            #expect(count == 1000)
            let failures = results.enumerated().filter { if case .failure = $0.element { true } else { false } }
            #expect(failures.map(\.offset) == [700])
            if case .failure(let error) = results[700] { #expect(error.isUniqueViolation) }
            #expect(try results[0].get().affectedRows == 1)
            #expect(try results[1001].get()[0].decode(Int.self, column: 0) == 10)
            // The connection is back in normal mode.
            let after = try await db.pool.withConnection { c in try c.query("SELECT 1")[0].decode(Int.self, column: 0) }
            #expect(after == 1)
        }
    }

    @Test("pipelineTransaction: all or nothing, the failing call's error is thrown")
    func pipelineAtomic() async throws {
        try await TestDatabase.withSchema { db in
            try await db.pool.withConnection { c in
                try c.executeScript("CREATE TABLE items (id int PRIMARY KEY, label text)")
            }
            let error = await #expect(throws: PostgresError.self) {
                try await db.pool.withConnection { c in
                    try c.pipelineTransaction([
                        PipelineCall(Self.insert, [1, "a"]), PipelineCall(Self.insert, [1, "again"]),
                        PipelineCall(Self.insert, [2, "b"]),
                    ])
                }
            }
            #expect(error?.isUniqueViolation == true)
            let (empty, results, total) = try await db.pool.withConnection { c in
                let empty = try c.query("SELECT count(*) FROM items")[0].decode(Int.self, column: 0)
                let results = try c.pipelineTransaction((1...50).map { PipelineCall(Self.insert, [$0, String?.none]) })
                return (empty, results.count, try c.query("SELECT count(*) FROM items")[0].decode(Int.self, column: 0))
            }
            #expect(empty == 0)
            #expect(results == 50)
            #expect(total == 50)
        }
    }

    @Test("a large pipeline of row-returning calls does not deadlock")
    func largePipeline() async throws {
        try await TestDatabase.withSchema { db in
            let results = try await db.pool.withConnection { c in
                try c.pipeline((0..<20_000).map { PipelineCall(sql: "SELECT $1::int, repeat('x', 200)", [$0]) })
            }
            #expect(results.count == 20_000)
            #expect(try results[19_999].get()[0].decode(Int.self, column: 0) == 19_999)
        }
    }
}
