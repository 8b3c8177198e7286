import Bus
import Contracts
import Foundation
import LoadKit

/// `audit.record` calls over the bus, spread over several client sockets and many users: the
/// operation the benchmark drives.
struct LoadGenerator: Sendable {
    let clients: [RPCClient]
    let version: String
    let users: [UUID]
    /// Who the records are made for: the benchmark acts as an operator (Audit refuses anonymous records).
    static let principal = Principal.operator("audit-bench")

    var driver: LoadDriver {
        LoadDriver { [clients, version, users] index in
            let request = AuditRecord.Request(
                userId: users[index % users.count], documentType: .termsOfService, version: version, action: .accept,
                clientIP: "203.0.113.7", userAgent: "audit-bench")
            do {
                _ = try await clients[index % clients.count].call(
                    AuditRecord.self, request, principal: Self.principal, idempotencyKey: MessageID.text(of: MessageID.make()),
                    timeout: .seconds(30))
                return nil
            } catch let error as BusError {
                return error.code.rawValue
            } catch {
                return "client"
            }
        }
    }
}

/// One measured phase: what it was and what it measured.
struct PhaseResult {
    var label: String
    var measured: LoadRecorder.Snapshot
    var rate: Double { measured.rate }
    var failed: Int { measured.failed }
    func milliseconds(_ percentile: Double) -> Double { measured.milliseconds(percentile) }
}

extension LoadGenerator {
    func closedLoop(inFlight: Int, for duration: Duration, label: String) async -> PhaseResult {
        PhaseResult(label: label, measured: await driver.closedLoop(concurrency: inFlight, for: duration))
    }

    func openLoop(rate: Double, for duration: Duration, label: String) async -> PhaseResult {
        PhaseResult(label: label, measured: await driver.openLoop(rate: rate, for: duration))
    }
}
