import Foundation
import Postgres
import ServiceKit
import Synchronization
import TestSupport
import Testing

/// The race a re-run `compass db roles` can lose to a starting service (both grant on one
/// schema): PostgreSQL takes no lock for `GRANT`, so of two sessions updating one table's ACL the
/// later fails "tuple concurrently updated" once the first commits. The start-up steps retry it.
@Suite struct DatabaseRetryTests {
    @Test func aGrantThatLostARaceToAnotherIsRunAgain() async throws {
        try await TestDatabase.withSchema { schema in
            let table = "\(schema.name).shared_acl"
            try await schema.pool.withConnection { db in try db.executeScript("CREATE TABLE \(table) (id int)") }
            let first = try await PostgresConnection.connect(configuration: schema.configuration, logger: schema.logger)
            let second = try await PostgresConnection.connect(configuration: schema.configuration, logger: schema.logger)
            defer {
                Task {
                    await first.close()
                    await second.close()
                }
            }
            let secondPID = await second.backendPID

            // The first session's grant is written and not committed: the row's new version is its own.
            try await first.run { db in try db.executeScript("BEGIN; GRANT SELECT ON \(table) TO PUBLIC") }
            let attempts = Tally()
            let failures = ErrorLog()
            let racing = Task {
                try await DatabaseRetry.run(within: .seconds(60), logger: schema.logger) {
                    attempts.add()
                    do {
                        try await second.run { db in try db.executeScript("GRANT INSERT ON \(table) TO PUBLIC") }
                    } catch {
                        failures.append(error)
                        throw error
                    }
                }
            }
            // The second grant waits for the first transaction's row lock; then the first commits.
            try await OutboxTests.waitUntil(.seconds(60)) {
                try await schema.pool.withConnection { db in
                    try db.query("SELECT wait_event_type FROM pg_stat_activity WHERE pid = $1", secondPID)
                        .first.map { try $0.decode(String?.self, column: 0) } == "Lock"
                }
            }
            try await first.run { db in try db.executeScript("COMMIT") }
            try await racing.value

            let lost = try #require(failures.errors.first as? PostgresError)
            #expect(lost.isConcurrentCatalogUpdate, "\(lost)")
            #expect(!lost.isTransient, "the generic XX000 is not retried by request paths")
            #expect(attempts.count == 2)
            // Both grants hold: the retry applied the one that lost.
            let privileges = try await schema.pool.withConnection { db in
                try db.query(
                    "SELECT has_table_privilege('public', $1, 'SELECT'), has_table_privilege('public', $1, 'INSERT')", table
                )[0].decode(Bool.self, Bool.self)
            }
            #expect(privileges == (true, true))
        }
    }

    /// Other errors are the caller's at once: a statement that is wrong is not run again.
    @Test func aPermanentErrorIsNotRetried() async throws {
        try await TestDatabase.withSchema { schema in
            let attempts = Tally()
            let error = await #expect(throws: PostgresError.self) {
                try await DatabaseRetry.run(within: .seconds(60), logger: schema.logger, retrying: DatabaseRetry.oneShot) {
                    attempts.add()
                    try await schema.pool.withConnection { db in try db.executeScript("GRANT SELECT ON TO PUBLIC") }
                }
            }
            #expect(error?.sqlState == "42601")
            #expect(attempts.count == 1)
        }
    }
}

/// Errors seen by a retried body, in order.
private final class ErrorLog: Sendable {
    private let lock = Mutex<[any Error]>([])
    func append(_ error: any Error) { lock.withLock { $0.append(error) } }
    var errors: [any Error] { lock.withLock { $0 } }
}
