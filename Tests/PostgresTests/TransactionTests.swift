import Postgres
import TestSupport
import Testing

@Suite("Transactions")
struct TransactionTests {
    struct Boom: Error {}

    @Test("withTransaction commits on return and rolls back when the body throws")
    func rollbackOnError() async throws {
        try await TestDatabase.withSchema { db in
            try await db.pool.withConnection { c in try c.executeScript("CREATE TABLE t (v int)") }
            try await db.pool.withTransaction { c in try c.execute("INSERT INTO t VALUES ($1)", 1) }
            await #expect(throws: Boom.self) {
                try await db.pool.withTransaction { c in
                    try c.execute("INSERT INTO t VALUES ($1)", 2)
                    throw Boom()
                }
            }
            await #expect(throws: PostgresError.self) {
                try await db.pool.withTransaction { c in
                    try c.execute("INSERT INTO t VALUES ($1)", 3)
                    try c.execute("INSERT INTO t VALUES ($1)", "not a number")
                }
            }
            let values = try await db.pool.withConnection { c in
                try c.query("SELECT v FROM t ORDER BY v").map { try $0.decode(Int.self, column: 0) }
            }
            #expect(values == [1])
        }
    }

    @Test("nested transactions use savepoints: an inner failure can be caught and the outer commits")
    func nested() async throws {
        try await TestDatabase.withSchema { db in
            let status = try await db.pool.withConnection { c in
                try c.executeScript("CREATE TABLE t (v int UNIQUE)")
                try c.transaction { c in
                    try c.execute("INSERT INTO t VALUES ($1)", 1)
                    do {
                        try c.transaction { c in
                            try c.execute("INSERT INTO t VALUES ($1)", 2)
                            try c.execute("INSERT INTO t VALUES ($1)", 1)  // unique violation
                        }
                        Issue.record("the inner transaction should have failed")
                    } catch let error as PostgresError {
                        #expect(error.isUniqueViolation)
                    }
                    try c.transaction { c in try c.execute("INSERT INTO t VALUES ($1)", 3) }
                }
                return c.transactionStatus
            }
            #expect(status == .idle)
            let values = try await db.pool.withConnection { c in
                try c.query("SELECT v FROM t ORDER BY v").map { try $0.decode(Int.self, column: 0) }
            }
            #expect(values == [1, 3])
        }
    }

    @Test("a body that swallows a server error cannot commit: the transaction reports the rollback")
    func swallowedError() async throws {
        try await TestDatabase.withSchema { db in
            try await db.pool.withConnection { c in try c.executeScript("CREATE TABLE t (v int)") }
            let error = await #expect(throws: PostgresError.self) {
                try await db.pool.withTransaction { c in
                    try c.execute("INSERT INTO t VALUES ($1)", 1)
                    _ = try? c.query("SELECT 1/0")
                }
            }
            #expect(error?.sqlState == "25P02")
            let count = try await db.pool.withConnection { c in try c.query("SELECT count(*) FROM t")[0].decode(Int.self, column: 0) }
            #expect(count == 0)
        }
    }

    @Test("a connection returned inside a manual BEGIN is rolled back before reuse")
    func leakedTransaction() async throws {
        try await TestDatabase.withSchema(maxConnections: 1) { db in
            try await db.pool.withConnection { c in try c.executeScript("CREATE TABLE t (v int)") }
            await #expect(throws: TransactionTests.Boom.self) {
                try await db.pool.withConnection { c in
                    try c.query("BEGIN")
                    try c.execute("INSERT INTO t VALUES (1)")
                    throw Boom()
                }
            }
            let (status, count) = try await db.pool.withConnection { c in
                (c.transactionStatus, try c.query("SELECT count(*) FROM t")[0].decode(Int.self, column: 0))
            }
            #expect(status == .idle)
            #expect(count == 0)
        }
    }
}
