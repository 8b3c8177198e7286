import Postgres
import TestSupport
import Testing

@Suite("Pipelined transactions")
struct PipelinedTransactionTests {
    struct Boom: Error {}

    static let insert = PostgresStatement(name: "pipelined_insert", sql: "INSERT INTO t VALUES ($1::int)")

    /// What table `t` holds, in order.
    static func rows(in pool: PostgresPool) async throws -> [Int] {
        try await pool.withConnection { c in try c.query("SELECT v FROM t ORDER BY v").map { try $0.decode(Int.self, column: 0) } }
    }

    @Test("the opening results reach the body; the closing statements and the body's writes commit together")
    func commits() async throws {
        try await TestDatabase.withSchema { db in
            let (value, status) = try await db.pool.withConnection { c in
                try c.executeScript("CREATE TABLE t (v int UNIQUE); INSERT INTO t VALUES (1)")
                let value = try c.pipelinedTransaction(opening: [PipelineCall(sql: "SELECT max(v) FROM t", []), PipelineCall(Self.insert, [2])]) {
                    c, opened in
                    #expect(c.transactionStatus == .inTransaction)
                    let highest = try opened[0][0].decode(Int.self, column: 0)
                    try c.execute("INSERT INTO t VALUES ($1)", highest + 10)
                    return ([PipelineCall(Self.insert, [highest + 20])], highest)
                }
                return (value, c.transactionStatus)
            }
            #expect(value == 1)
            #expect(status == .idle)
            let values = try await Self.rows(in: db.pool)
            #expect(values == [1, 2, 11, 21])
        }
    }

    @Test("a failure in the opening, the body or the closing rolls everything back and throws the cause")
    func rollsBack() async throws {
        try await TestDatabase.withSchema { db in
            try await db.pool.withConnection { c in try c.executeScript("CREATE TABLE t (v int UNIQUE); INSERT INTO t VALUES (1)") }
            // The opening fails: its second statement repeats a key.
            let opening = await #expect(throws: PostgresError.self) {
                try await db.pool.withConnection { c in
                    try c.pipelinedTransaction(opening: [PipelineCall(Self.insert, [5]), PipelineCall(Self.insert, [1])]) { _, _ in
                        Issue.record("the body ran after a failed opening")
                        return ([], ())
                    }
                }
            }
            #expect(opening?.isUniqueViolation == true)
            // The body throws after writing.
            await #expect(throws: Boom.self) {
                try await db.pool.withConnection { c in
                    try c.pipelinedTransaction(opening: [PipelineCall(Self.insert, [6])]) { c, _ -> ([PipelineCall], Void) in
                        try c.execute("INSERT INTO t VALUES ($1)", 7)
                        throw Boom()
                    }
                }
            }
            // The closing fails on its first statement: the later ones and COMMIT never run.
            let (closing, status) = await { () async -> (PostgresError?, PostgresConnection.TransactionStatus?) in
                do {
                    return try await db.pool.withConnection { c in
                        do {
                            try c.pipelinedTransaction(opening: [PipelineCall(Self.insert, [8])]) { _, _ in
                                ([PipelineCall(Self.insert, [1]), PipelineCall(Self.insert, [9])], ())
                            }
                            return (nil, c.transactionStatus)
                        } catch let error as PostgresError {
                            return (error, c.transactionStatus)
                        }
                    }
                } catch {
                    Issue.record("unexpected \(error)")
                    return (nil, nil)
                }
            }()
            #expect(closing?.isUniqueViolation == true)
            #expect(status == .idle)
            let values = try await Self.rows(in: db.pool)
            #expect(values == [1])
        }
    }

    @Test("a body that swallows a server error cannot commit: the rollback is reported")
    func swallowedError() async throws {
        try await TestDatabase.withSchema { db in
            try await db.pool.withConnection { c in try c.executeScript("CREATE TABLE t (v int UNIQUE)") }
            let error = await #expect(throws: PostgresError.self) {
                try await db.pool.withConnection { c in
                    try c.pipelinedTransaction(opening: [PipelineCall(Self.insert, [1])]) { c, _ in
                        _ = try? c.query("SELECT 1/0")
                        return ([], ())
                    }
                }
            }
            #expect(error?.sqlState == "25P02")
            let count = try await db.pool.withConnection { c in try c.query("SELECT count(*) FROM t")[0].decode(Int.self, column: 0) }
            #expect(count == 0)
        }
    }
}
