import Foundation
import TestSupport

extension Stack {
    /// Waits (bounded) until Accounts' consent stream is empty: Audit has chained every act and
    /// deletion Accounts stored (acts reach Audit after Accounts' commit, not before its reply).
    func waitForChained(timeout: Duration = .seconds(60)) async throws {
        try await withTimeout(timeout, "audit chaining the consent stream") {
            while try await self.count("SELECT count(*)::bigint FROM accounts.consent_outbox") > 0 {
                try await Task.sleep(for: .milliseconds(20))
            }
        }
    }
}
