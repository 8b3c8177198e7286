import Bus
import Foundation
import Postgres
import ServiceKit
import TestSupport
import Testing

/// Database failures reach bus callers with the code that tells them what to do: a broken rule is
/// the caller's (`conflict`), an unreachable database is temporary (`unavailable`), anything else
/// is `internal` without details.
@Suite struct DatabaseErrorMappingTests {
    enum Insert: RPCMethod {
        typealias Request = Empty
        typealias Reply = Empty
        static let type = "test.insert"
        static let cachesReply = false
    }
    enum Broken: RPCMethod {
        typealias Request = Empty
        typealias Reply = Empty
        static let type = "test.broken"
        static let cachesReply = false
    }

    /// A read-only database (a standby after a fail-over, `default_transaction_read_only`) and a
    /// full disk are temporary states the caller should wait out, not internal errors.
    @Test func readOnlyAndOutOfSpaceAreUnavailable() async throws {
        try await TestDatabase.withSchema { schema in
            let name = schema.name
            let error = await #expect(throws: PostgresError.self) {
                try await schema.pool.withConnection { db in
                    try db.executeScript("SET default_transaction_read_only = on")
                    defer { try? db.executeScript("SET default_transaction_read_only = off") }
                    _ = try db.execute("CREATE TABLE \(name).refused (id int)")
                }
            }
            #expect(error?.sqlState == "25006")
            #expect(error?.busError.code == .unavailable)
            #expect(error?.busError.message.contains("read-only") == true)
            let full = PostgresError(kind: .server, operation: "PQexecParams", message: "could not extend file", sqlState: "53100")
            #expect(full.busError.code == .unavailable)
        }
    }

    /// One list of what is worth retrying: the consumer's "never park on this" and the bus's
    /// `unavailable` are both `PostgresError.isTransient`, so they cannot drift apart again.
    @Test func transientIsExactlyWhatCallersAreToldToRetry() {
        let transient = ["40001", "40P01", "53100", "53200", "53300", "55P03", "57014", "25006", "08006", "57P01"]
        let permanent = ["40002", "40003", "23505", "23503", "22P02", "42601", "42P01", "XX000"]
        for state in transient + permanent {
            let error = PostgresError(kind: .server, operation: "PQexecParams", message: "m", sqlState: state)
            #expect(error.isTransient == transient.contains(state), "\(state)")
            #expect((error.busError.code == .unavailable) == error.isTransient, "\(state): \(error.busError)")
        }
        for kind: PostgresError.Kind in [.checkoutTimeout, .closed, .connection] {
            let error = PostgresError(kind: kind, operation: "checkout", message: "m")
            #expect(error.isTransient && error.busError.code == .unavailable, "\(kind)")
        }
    }

    @Test func postgresErrorsBecomeTheRightBusCodes() async throws {
        try await TestDatabase.withSchema { schema in
            let name = schema.name
            try await schema.pool.withConnection { db in try db.executeScript("CREATE TABLE \(name).once (id int PRIMARY KEY)") }
            let pool = PostgresPool(configuration: schema.configuration, maxConnections: 2, logger: testLogger())
            let server = RPCServer(name: "test", endpoints: ["tcp://127.0.0.1:*"], logger: testLogger())
            server.register(Insert.self) { _, _ in
                try await pool.withConnection { db in _ = try db.execute("INSERT INTO \(name).once (id) VALUES (1)") }
                return Empty()
            }
            server.register(Broken.self) { _, _ in
                try await pool.withConnection { db in _ = try db.query("SELEC nonsense") }
                return Empty()
            }
            try await server.start()
            let client = try await RPCClient.connect(to: "test", endpoints: server.boundEndpoints, logger: testLogger())
            // The codes are under test, not the time: a fresh clone's first minute (every suite
            // opening connections at once, 491 of 500 in use) made the pool's first connection
            // outlast the client's 5 s default, and the first call failed deadline_exceeded.
            let patient = Duration.seconds(60)

            _ = try await client.call(Insert.self, Empty(), timeout: patient)
            await #expect(throws: BusError(.conflict, "already exists")) { _ = try await client.call(Insert.self, Empty(), timeout: patient) }
            await #expect(throws: BusError(.internal, "internal database error")) {
                _ = try await client.call(Broken.self, Empty(), timeout: patient)
            }
            await pool.close()
            await #expect(throws: BusError(.unavailable, "the database is unavailable; try again")) {
                _ = try await client.call(Insert.self, Empty(), timeout: patient)
            }
            await client.close()
            await server.shutdown()
        }
    }
}
