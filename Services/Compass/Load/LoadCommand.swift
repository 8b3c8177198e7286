import ArgumentParser
import Bus
import Contracts
import Foundation
import LoadKit
import Locks

/// `compass load acceptances`: load-tests acceptance writes the way users of this system will,
/// then proves that every write it saw acknowledged is stored.
struct Load: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Load-test the system.", subcommands: [Acceptances.self, LoadUsers.self, Baseline.self])

    struct Acceptances: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Drive terms acceptances (audit.record) and report throughput, latency and errors.",
            discussion: """
                --max keeps --concurrency calls in flight (closed loop); --rate N sends N per second
                whatever the latency (open loop: latency counts from each call's scheduled time).
                Afterwards every acknowledged write is checked against the store (audit.verify_receipt)
                and any missing one is reported (exit 1). --baseline also measures pgbench's
                one-INSERT-per-commit rate on DATABASE_URL (pgbench -M prepared), so the ratio comes
                from one run. --via accounts first makes --users users in bulk (as `compass load
                users` does; DATABASE_URL or --database-url must reach Accounts' schema as its owner)
                and drives accounts.accept_terms_batch the way the gateway calls it: acceptances that
                arrive while a batch is under way go together in the next one, one batch in flight
                per client socket. Accounts acknowledges an act once it is in its consent stream and
                Audit chains it afterwards: the run then waits until the stream is empty and reports
                how long that took and the rate over the load and that wait (exit 1 if Audit has not
                chained every act within 10 times the duration, at least 60 s).
                """)

        @Option(help: "Calls per second (open loop).") var rate: Double?
        @Flag(help: "As fast as --concurrency allows (closed loop).") var max = false
        @Option(help: "Calls in flight with --max.") var concurrency = 64
        @Option(help: "Seconds to run.") var duration = 10
        @Option(help: "Distinct users the writes are spread over.") var users = 100_000
        @Option(help: "Bus client sockets.") var clients = 2
        @Option(
            help:
                "bus: audit.record on the bus; accounts: accounts.accept_terms_batch for users made in bulk, batched as the gateway does; http: the gateway's seed routes (a test deployment with GATEWAY_LEGACY_UNAUTHENTICATED_CLIENTS=true)."
        )
        var via: Transport = .bus
        @Option(help: "The gateway's URL, with --via http.") var gateway = "http://127.0.0.1:8080"
        @Option(help: "With --via accounts: a URL of Accounts' schema owner for the bulk users (default: DATABASE_URL).")
        var databaseURL: String?
        @Flag(help: "Measure pgbench's one-INSERT-per-commit rate (-M prepared) on DATABASE_URL first.") var baseline = false
        @Flag(help: "Skip checking that acknowledged writes are stored.") var noCheck = false
        @Flag(help: "Print the report as JSON.") var json = false
        @Flag(help: "Log bus details to standard error.") var verbose = false

        func validate() throws {
            guard (rate != nil) != max else { throw ValidationError("give exactly one of --rate N and --max") }
            if let rate, rate <= 0 { throw ValidationError("--rate must be above 0") }
            guard concurrency > 0, duration > 0, users > 0, clients > 0 else {
                throw ValidationError("--concurrency, --duration, --users and --clients must be above 0")
            }
            if baseline, DatabaseURL.given() == nil {
                throw ValidationError("--baseline: " + DatabaseURL.refusal(role: "the database pgbench writes to"))
            }
        }

        enum Transport: String, ExpressibleByArgument, CaseIterable { case bus, accounts, http }

        func run() async throws {
            let bus = try BusAccess(verbose: verbose)
            var report = LoadReport(
                mode: "\(via.rawValue), " + (max ? "closed loop, \(concurrency) in flight" : "open loop, \(rate ?? 0)/s"), seconds: duration,
                users: users)
            if baseline, let url = DatabaseURL.given() {
                report.baselineTPS = try await BaselineTable.measure(url: url, seconds: duration)
            }
            if via == .accounts {
                try await runThroughAccounts(bus, report: &report)
                return
            }
            if via == .http {
                let load = try await HTTPAcceptances.prepare(gateway: gateway, users: users)
                report.measured = await measure(load.driver)
                if !noCheck { report.check = try await load.check(with: bus) }
                try finish(report)
                return
            }
            let version = try await bus.call(LegalCurrent.self, .init(type: .termsOfService)).summary.version
            var sockets: [RPCClient] = []
            for _ in 0..<clients { sockets.append(try await bus.client(for: .audit)) }
            let receipts = LockedValue<[ConsentReceipt]>([])
            let userIDs = (0..<users).map { _ in UUID() }
            let principal = bus.principal
            let driver = LoadDriver { [sockets] index in
                let request = AuditRecord.Request(
                    userId: userIDs[index % userIDs.count], documentType: .termsOfService, version: version, action: .accept,
                    clientIP: "203.0.113.7", userAgent: "compass-load")
                do {
                    let receipt = try await sockets[index % sockets.count].call(
                        AuditRecord.self, request, principal: principal, idempotencyKey: MessageID.text(of: MessageID.make()),
                        timeout: .seconds(30))
                    receipts.withLock { $0.append(receipt) }
                    return nil
                } catch let error as BusError {
                    return error.code.rawValue
                } catch {
                    return "client"
                }
            }
            report.measured = await measure(driver)
            if !noCheck {
                report.check = await StoredCheck.run(receipts.withLock { $0 }, on: sockets)
            }
            for socket in sockets { await socket.close() }
            try finish(report)
        }

        /// The bulk users first, then their acceptances batched to Accounts; the report's batch figures.
        func runThroughAccounts(_ bus: BusAccess, report: inout LoadReport) async throws {
            let made = try await LoadUsers.bulk(bus: bus, databaseURL: databaseURL, schema: "accounts").make(count: users) { line in
                if !json { FileHandle.standardError.write(Data("\(line)\n".utf8)) }
            }
            var batchers: [AcceptBatcher] = []
            for _ in 0..<clients { batchers.append(AcceptBatcher(client: try await bus.client(for: .accounts), principal: bus.principal)) }
            let load = AccountsAcceptances(users: made.users.map(\.id), version: made.version, batchers: batchers)
            // The stream starts empty (an earlier run's acts chained), so the drain after is this run's.
            let url = try LoadUsers.databaseURL(databaseURL)
            let limit = Duration.seconds(Swift.max(60, 10 * duration))
            _ = try await ConsentDrain.wait(databaseURL: url, schema: "accounts", limit: limit, logger: bus.logger)
            report.measured = await measure(load.driver)
            report.drain = try await ConsentDrain.wait(databaseURL: url, schema: "accounts", limit: limit, logger: bus.logger)
            var (batches, items) = (0, 0)
            for batcher in batchers {
                batches += await batcher.batches
                items += await batcher.items
            }
            report.itemsPerBatch = batches > 0 ? Double(items) / Double(batches) : nil
            try finish(report)
        }

        func measure(_ driver: LoadDriver) async -> LoadRecorder.Snapshot {
            let recorder = LoadRecorder()
            let progress = ProgressLine(recorder: recorder, quiet: json)
            defer { progress.finish() }
            return max
                ? await driver.closedLoop(concurrency: concurrency, for: .seconds(duration), into: recorder)
                : await driver.openLoop(rate: rate ?? 1, for: .seconds(duration), into: recorder)
        }

        func finish(_ report: LoadReport) throws {
            print(json ? report.json : report.text)
            if let check = report.check, check.missing > 0 { throw ExitCode(1) }
            if let drain = report.drain, drain.remaining > 0 { throw ExitCode(1) }
        }
    }
}

/// A live line on standard error, once a second: rate, errors and latency so far.
final class ProgressLine: Sendable {
    private let task: Task<Void, Never>?

    init(recorder: LoadRecorder, quiet: Bool) {
        guard !quiet else {
            task = nil
            return
        }
        let terminal = isatty(STDERR_FILENO) == 1
        task = Task {
            while !Task.isCancelled {
                try? await Task.sleep(for: .seconds(1))
                let now = recorder.snapshot
                let line = String(
                    format: "%5.1f s  %8.0f/s  ok %d  errors %d  p50 %.1f ms  p99 %.1f ms",
                    now.elapsed, now.rate, now.completed, now.failed, now.milliseconds(50), now.milliseconds(99))
                FileHandle.standardError.write(Data((terminal ? "\r\(line)" : "\(line)\n").utf8))
            }
        }
    }

    func finish() {
        task?.cancel()
        if isatty(STDERR_FILENO) == 1 { FileHandle.standardError.write(Data("\n".utf8)) }
    }
}
