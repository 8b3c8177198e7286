import Bus
import Contracts
import Foundation
import TestSupport
import Testing

extension ReliabilityTests {
    /// The reliability requirement as written: `compass load acceptances` (the operator's load
    /// tool, a separate process) running at its peak while Audit is SIGKILLed and restarted. The
    /// tool checks every write it saw acknowledged against the store afterwards
    /// (`audit.verify_receipt`); the test checks that report and the table.
    @Suite("Reliability: compass load while Audit is killed")
    struct CompassLoadKillTests {
        @Test("compass load acceptances at its peak, Audit SIGKILLed and restarted: every acknowledged write is stored")
        func compassLoadSurvivesAuditKill() async throws {
            try await Stack.run { stack in
                var environment = ProcessInfo.processInfo.environment
                environment["LEGAL_RPC_ENDPOINTS"] = stack.rpc["Legal"]!
                environment["AUDIT_RPC_ENDPOINTS"] = stack.rpc["Audit"]!
                let load = Task {
                    try await ChildProcess.run(
                        ChildProcess.product("compass"), ["load", "acceptances", "--max", "--concurrency", "64", "--duration", "8", "--json"],
                        environment: environment)
                }
                // At its peak: Audit has stored a first batch of the tool's writes.
                try await withTimeout(.seconds(60), "the load's first 500 stored records") {
                    while try await stack.count("SELECT count(*)::bigint FROM audit.records") < 500 {
                        try await Task.sleep(for: .milliseconds(20))
                    }
                }
                let storedAtKill = try await stack.count("SELECT count(*)::bigint FROM audit.records")
                stack.kill("Audit")
                try await Task.sleep(for: .milliseconds(500))
                let killedAt = ContinuousClock.now
                try await stack.start("Audit")
                let restart = ContinuousClock.now - killedAt
                let run = try await load.value
                let (status, output) = (run.status, run.output)

                #expect(status == 0, "compass load exited \(status): \(output)")
                let report = try #require(try JSONSerialization.jsonObject(with: Data(output.utf8)) as? [String: Any], "\(output)")
                let acknowledged = try #require(report["acknowledged"] as? Int)
                let stored = try #require(report["stored"] as? [String: Any])
                #expect(
                    acknowledged > storedAtKill,
                    "the load went on after the restart: \(acknowledged) acknowledged, \(storedAtKill) stored at the kill")
                #expect(stored["checked"] as? Int == acknowledged)
                #expect(stored["missing"] as? Int == 0, "\(stored)")
                let rows = try await stack.count("SELECT count(*)::bigint FROM audit.records")
                // Calls in flight at the kill are retried by the client with their keys: a write
                // that did not fail is stored exactly once.
                let failed = try #require(report["failed"] as? Int)
                #expect(rows >= acknowledged && rows <= acknowledged + failed, "\(rows) rows for \(acknowledged) acknowledged and \(failed) failed")
                // The tests run debug builds, where walking the chains costs milliseconds per record
                // (HMACs and hashes through unspecialised generics): the 18k records of a fast run
                // took longer than a minute on a loaded machine. A release build verifies 51k in 0.8 s.
                let verified = try await stack.audit.call(AuditVerify.self, Empty(), principal: Stack.operatorPrincipal, timeout: .seconds(300))
                #expect(verified.valid)
                print(
                    "RELIABILITY compass-load-audit-kill acknowledged=\(acknowledged) failed=\(report["failed"] ?? "?") errors=\(report["errors"] ?? "?") missing=\(stored["missing"] ?? "?") rows=\(rows) stored-at-kill=\(storedAtKill) restart-to-ready=\(restart)"
                )
            }
        }
    }
}
