import Bus
import Contracts
import Foundation
import Postgres
import TestSupport
import Testing

/// The real `Legal` executable as a child process. It always uses the schema `legal` (its name),
/// so each test gives it a database of its own (`TestDatabase.withDatabase`): exact counts of
/// versions and events then hold while other tests run.
struct LegalProcess {
    let process: PeerProcess
    let rpc: String
    let events: String
    let client: RPCClient

    /// Starts the executable on fresh ipc endpoints against `databaseURL` and waits for its ready line.
    static func start(databaseURL: String) async throws -> LegalProcess {
        let (rpc, events) = (ipcEndpoint(), ipcEndpoint())
        let environment = ServiceEnvironment.make(databaseURL: databaseURL, rpc: rpc, events: events, logLevel: "info")
        let process = try await PeerProcess("Legal", environment: environment)
        let client = try await RPCClient.connect(to: "legal", endpoints: [rpc], logger: testLogger())
        return LegalProcess(process: process, rpc: rpc, events: events, client: client)
    }

    func call<M: RPCMethod>(_ method: M.Type, _ request: M.Request, principal: Principal? = nil) async throws -> M.Reply {
        do {
            return try await client.call(method, request, principal: principal, timeout: .seconds(10))
        } catch {
            Issue.record("\(M.type) failed: \(error); service output:\n\(process.output)")
            throw error
        }
    }

    /// Waits until `legal.events.since` returns `count` events (the relay numbers committed rows
    /// a moment after they commit), and returns them.
    func events(count: Int) async throws -> [Envelope] {
        let client = self.client
        return try await withTimeout(.seconds(15), "\(count) events from legal.events.since") {
            while true {
                let events = try await LegalEventsSince.fetch(from: client, after: 0)
                if events.count >= count { return events }
                try await Task.sleep(for: .milliseconds(50))
            }
        }
    }

    /// SIGTERM, and the exit status (expected 0: a graceful shutdown).
    func stop() async -> Int32? {
        await client.close()
        process.signal(SIGTERM)
        return await process.waitForExit(timeout: .seconds(20))
    }
}

extension TestDatabaseInstance {
    /// Rows in `table`, as a check beside what the service says over the bus.
    func count(_ table: String) async throws -> Int {
        // `table` is a literal from the test itself.
        try await pool.withConnection { db in try db.query("SELECT count(*) FROM \(table)")[0].decode(Int.self, column: 0) }
    }
}
