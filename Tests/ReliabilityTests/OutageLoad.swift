import Bus
import Contracts
import Foundation

/// The load the outage tests (a database restarted, frozen or black-holed) keep up across the
/// outage: writers of `audit.record` over the bus, and acceptances probed through the gateway.
enum OutageLoad {
    /// 16 writers of `audit.record`, each call a fresh user and key (`<keyPrefix>-<worker>-<n>`),
    /// every outcome and its time in `outcomes`, until `stop` is set.
    static func auditWriters(
        _ stack: Stack, terms: String, keyPrefix: String, timeout: Duration, outcomes: Outcomes, until stop: Flag
    ) -> Task<Void, Never> {
        Task {
            await withTaskGroup(of: Void.self) { group in
                for worker in 0..<16 {
                    group.addTask {
                        var index = 0
                        while !stop.isSet {
                            index += 1
                            let started = ContinuousClock.now
                            do {
                                let receipt = try await stack.audit.call(
                                    AuditRecord.self,
                                    .init(userId: UUID(), documentType: .termsOfService, version: terms, action: .accept),
                                    principal: Stack.operatorPrincipal, idempotencyKey: "\(keyPrefix)-\(worker)-\(index)", timeout: timeout)
                                outcomes.acknowledge(receipt.recordId, took: ContinuousClock.now - started)
                            } catch let error as BusError {
                                outcomes.fail(error.code, took: ContinuousClock.now - started)
                                try? await Task.sleep(for: .milliseconds(20))
                            } catch {
                                outcomes.fail(nil, took: ContinuousClock.now - started)
                            }
                        }
                    }
                }
            }
        }
    }

    /// One `PUT /api/users/{id}/accept-tos` through the gateway every 100 ms (keys
    /// `<keyPrefix>-<n>`), each status and its time in `probes`, until `stop` is set.
    static func gatewayProbes(
        _ http: GatewayHTTP, user: UUID, terms: String, keyPrefix: String, probes: HTTPProbes, until stop: Flag
    ) -> Task<Void, Never> {
        Task {
            var index = 0
            while !stop.isSet {
                index += 1
                let started = ContinuousClock.now
                let status = try? await http.acceptTerms(user: user, version: terms, key: "\(keyPrefix)-\(index)")
                probes.record(status, took: ContinuousClock.now - started)
                try? await Task.sleep(for: .milliseconds(100))
            }
        }
    }
}
