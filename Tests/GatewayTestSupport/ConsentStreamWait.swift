import Foundation
import TestSupport

extension GatewayHarness {
    /// Waits (bounded) until Accounts' consent stream is empty: Audit has chained every act and
    /// deletion Accounts stored. An accept-tos is acknowledged once Accounts committed it; Audit
    /// holds it milliseconds later.
    public func waitForChained(timeout: Duration = .seconds(30)) async throws {
        try await withTimeout(timeout, "audit chaining the consent stream") { [database] in
            while try await database.pool.withConnection({ db in
                try db.query("SELECT count(*)::bigint FROM accounts.consent_outbox")[0].decode(Int.self, column: 0)
            }) > 0 {
                try await Task.sleep(for: .milliseconds(20))
            }
        }
    }
}
