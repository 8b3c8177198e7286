import Foundation
import Logging
import Postgres

/// How long Audit took, after a `--via accounts` load's last acknowledgement, to chain every act
/// the load wrote: Accounts acknowledges an acceptance once it is in its consent stream, and Audit
/// chains it afterwards, so the acknowledged rate alone says nothing of whether Audit keeps up. A
/// load Audit cannot follow leaves a backlog, and the rate that lasts is the chained one:
/// acknowledged acts over the load's time and the drain's.
struct ConsentDrain: Sendable {
    /// Seconds from the load's end until the stream was empty (or the wait gave up).
    var seconds: Double
    /// Acts still in the stream when the wait gave up; 0 when Audit chained them all.
    var remaining: Int
    /// How far the poll counts the acts still waiting: past every load's total.
    static let countLimit = Int(Int32.max)

    /// Waits, up to `limit`, until Accounts' consent stream (`<schema>.consent_outbox`, read as
    /// its owner at `databaseURL`) is empty, polling every 50 ms through Accounts' own backlog
    /// count (`consents_backlog`, migration 0210: by the stream's index, not a scan of its heap of
    /// dead rows beside the chaining it waits for), counted up to `countLimit`.
    static func wait(databaseURL: String, schema: String, limit: Duration, logger: Logger) async throws -> ConsentDrain {
        let sql = "SELECT entries FROM \(schema).consents_backlog($1::int)"
        return try await PostgresConnection.using(
            configuration: try PostgresConfiguration(databaseURL, applicationName: "compass-load-drain"), logger: logger
        ) { connection in
            let start = ContinuousClock.now
            while true {
                let remaining = try await connection.run { db in try db.query(sql, Self.countLimit)[0].decode(Int.self, column: 0) }
                let waited = ContinuousClock.now - start
                if remaining == 0 || waited >= limit { return ConsentDrain(seconds: waited.inSeconds, remaining: remaining) }
                try await Task.sleep(for: .milliseconds(50))
            }
        }
    }
}
