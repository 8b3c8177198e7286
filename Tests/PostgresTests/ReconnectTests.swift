import Postgres
import TestSupport
import Testing

@Suite("Reconnect after a server restart")
struct ReconnectTests {
    @Test("the pool's first query after a restart succeeds on a new connection", arguments: [RestartMode.fast, .immediate])
    func poolReconnects(mode: RestartMode) async throws {
        try await TestDatabase.withExclusiveCluster(maxConnections: 3) { db in
            // Open three connections so several idle ones are dead after the restart.
            let before = try await withThrowingTaskGroup(of: Int32.self) { group in
                for _ in 0..<3 {
                    group.addTask {
                        try await db.pool.withConnection { c in
                            try c.query("SELECT pg_sleep(0.1)")
                            return c.backendPID
                        }
                    }
                }
                return try await group.reduce(into: Set<Int32>()) { $0.insert($1) }
            }
            #expect(before.count == 3)
            try await db.pool.withConnection { c in try c.executeScript("CREATE TABLE survivors (v int)") }

            try await TestDatabase.restartCluster(mode: mode)

            let after = try await db.pool.withConnection { c in
                try c.execute("INSERT INTO survivors VALUES ($1)", 1)
                return c.backendPID
            }
            #expect(!before.contains(after))
            let all = try await withThrowingTaskGroup(of: Int.self) { group in
                for _ in 0..<3 {
                    group.addTask {
                        try await db.pool.withConnection { c in try c.query("SELECT count(*) FROM survivors")[0].decode(Int.self, column: 0) }
                    }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(all == [1, 1, 1])
            #expect(db.pool.statistics.open <= 3)
        }
    }

    @Test("a lone connection reports the restart as a connection failure")
    func failureIsRecognisable() async throws {
        try await TestDatabase.withExclusiveCluster(maxConnections: 1) { db in
            let connection = try await PostgresConnection.connect(configuration: db.configuration, logger: db.logger)
            try await connection.run { c in try c.query("SELECT 1") }
            try await TestDatabase.restartCluster(mode: .immediate)
            let error = await #expect(throws: PostgresError.self) { try await connection.run { c in try c.query("SELECT 1") } }
            #expect(error?.isConnectionFailure == true)
            #expect(await connection.isBroken)
            await connection.close()

        }
    }
}
