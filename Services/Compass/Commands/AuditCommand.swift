import ArgumentParser
import Bus
import Contracts
import Foundation

/// `compass audit verify`: recomputes every hash chain of the consent log.
struct AuditCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "audit", abstract: "Check the consent audit log.", subcommands: [Verify.self])

    struct Verify: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Recompute every chain and checkpoint; exit 1 when anything is broken.")
        @Option(help: "Seconds to wait (verification reads every record).") var timeout: Double = 300
        @Flag(help: "Log bus details to standard error.") var verbose = false

        func run() async throws {
            let bus = try BusAccess(verbose: verbose)
            let report = try await bus.call(AuditVerify.self, Empty(), timeout: .milliseconds(Int64(timeout * 1000)))
            for chain in report.chains {
                let state = chain.firstBrokenPosition.map { "BROKEN at position \($0): \(chain.problem ?? "")" } ?? "ok"
                print("chain \(chain.chain): \(chain.records) records, \(state)")
            }
            if !report.badCheckpoints.isEmpty {
                print("bad checkpoints: \(report.badCheckpoints.map(String.init).joined(separator: ", "))")
            }
            let total = report.chains.map(\.records).reduce(0, +)
            print(report.valid ? "valid: \(total) records in \(report.chains.count) chains" : "INVALID")
            if !report.valid { throw ExitCode(1) }
        }
    }
}
