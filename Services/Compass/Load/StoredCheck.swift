import Bus
import Contracts
import Foundation

/// After a load run: is every acknowledged write really stored? Each receipt is checked by the
/// Audit service against its store and hash chain (`audit.verify_receipt`), 64 at a time.
struct StoredCheck: Sendable {
    var checked = 0
    var missing = 0
    /// Why the first few failed, for the report.
    var examples: [String] = []
    /// How long the check waited for writes acknowledged before they were chained (`--via http`).
    var waited: Duration?

    static func run(_ receipts: [ConsentReceipt], on clients: [RPCClient]) async -> StoredCheck {
        await withTaskGroup(of: String?.self) { group in
            var result = StoredCheck()
            var next = 0
            func add() {
                guard next < receipts.count else { return }
                let receipt = receipts[next]
                let client = clients[next % clients.count]
                next += 1
                group.addTask {
                    do {
                        let reply = try await client.call(AuditVerifyReceipt.self, receipt, timeout: .seconds(30))
                        return reply.valid ? nil : "\(receipt.recordId): \(reply.reason ?? "invalid")"
                    } catch {
                        return "\(receipt.recordId): \(error)"
                    }
                }
            }
            for _ in 0..<64 { add() }
            while let outcome = await group.next() {
                result.checked += 1
                if let outcome {
                    result.missing += 1
                    if result.examples.count < 5 { result.examples.append(outcome) }
                }
                add()
            }
            return result
        }
    }
}
