import Bus
import Foundation
import Identity
import TestSupport
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// `compass up` and the bus commands against the real executables and a real PostgreSQL: every
/// service comes up ready, the operator commands reach them, a crashed child is restarted, and
/// Ctrl-C leaves no process and no open port behind.
@Suite(.serialized) struct CompassUpTests {
    @Test func upRunsEveryServiceOperatesItAndStopsCleanly() async throws {
        try await TestDatabase.withDatabase { database in
            // Below the kernel's ephemeral range (32768+), where other tests' "port 0" sockets land.
            let base = Int.random(in: 210...319) * 100
            var environment = ProcessInfo.processInfo.environment
            environment["DATABASE_URL"] = database.url
            // The seed's own client sends no credentials: the stack runs as a test deployment would.
            environment["GATEWAY_LEGACY_UNAUTHENTICATED_CLIENTS"] = "true"
            // The load run below drives acceptances from one address: no rate limits.
            for rule in ["SIGN_IN_PER_IP", "SIGN_IN_PER_USER", "ACCEPT_PER_IP", "ACCEPT_PER_USER"] {
                environment["GATEWAY_RATE_LIMIT_\(rule)"] = "off"
            }
            let up = try await PeerProcess(
                "compass", arguments: ["up", "--base-port", String(base)], environment: environment, timeout: .seconds(180))
            let started = up.readyLine.split(separator: ",").map(String.init)
            #expect(Set(["legal", "audit", "accounts"]).isSubset(of: Set(started)), "\(up.output)")
            let healthPorts = ["legal": base + 21, "accounts": base + 22, "documents": base + 23, "audit": base + 24, "gateway": base + 20]
            for name in started {
                let port = try #require(healthPorts[name])
                #expect(try await status(of: "http://127.0.0.1:\(port)/readyz") == 200, "\(name) not ready")
            }

            // Seed 004's sign-up through the gateway URL compass printed.
            let api = try #require(
                up.output.split(separator: "\n").first { $0.contains("API ") }.flatMap { line in
                    line.split(separator: " ").last.map(String.init)
                }, "\(up.output)")
            #expect(api == "http://127.0.0.1:\(base + 30)/api")
            let (terms, termsStatus) = try await http("GET", "\(api)/terms")
            #expect(termsStatus == 200)
            let version = try #require(terms["version"] as? String)
            let allowed: [String: Any] = [
                "apple_id": "compass-test.\(UUID())", "email": "a@example.com", "name": "Alex", "state": "CA",
                "eligibility_certified": true, "tos_version": version,
            ]
            let (user, created) = try await http("POST", "\(api)/users", allowed)
            #expect(created == 200 && user["id"] as? String != nil, "\(user)")
            var restricted = allowed
            restricted["apple_id"] = "compass-test.\(UUID())"
            restricted["state"] = "NV"
            let (refusal, refused403) = try await http("POST", "\(api)/users", restricted)
            #expect(refused403 == 403)
            #expect(refusal["error"] as? String == "Fantasy contests are not available in your state")

            // The operator commands, pointed at this stack through the services' own variables.
            var cli = ProcessInfo.processInfo.environment
            for (service, index) in [("LEGAL", 1), ("ACCOUNTS", 2), ("DOCUMENTS", 3), ("AUDIT", 4)] {
                cli["\(service)_RPC_ENDPOINTS"] = "tcp://127.0.0.1:\(base + index)"
                cli["\(service)_EVENTS_ENDPOINTS"] = "tcp://127.0.0.1:\(base + 10 + index)"
            }
            let status = try await run("compass", ["status", "--base-port", String(base)], cli)
            #expect(status.output.contains("legal      ready"), "\(status.output)")
            // A deployment that is not this layout (compose, Kubernetes) names each health server,
            // and the bus endpoints come from the variables; one server that does not answer is DOWN.
            let named = try await run(
                "compass",
                [
                    "status", "--health", "legal=http://127.0.0.1:\(base + 21)", "--health",
                    "gateway=http://127.0.0.1:\(base + 20)/",
                ], cli)
            #expect(named.status == 0, "\(named.output)")
            #expect(named.output.contains("legal      ready"), "\(named.output)")
            #expect(named.output.contains("rpc tcp://127.0.0.1:\(base + 1) events tcp://127.0.0.1:\(base + 11)"), "\(named.output)")
            #expect(named.output.contains("gateway    ready"), "\(named.output)")
            let oneDown = try await run("compass", ["status", "--health", "audit=http://127.0.0.1:\(base + 29)"], cli)
            #expect(oneDown.status == 1 && oneDown.output.contains("audit      DOWN"), "\(oneDown.output)")
            let malformed = try await run("compass", ["status", "--health", "legal"], cli)
            #expect(malformed.status != 0 && malformed.output.contains("--health takes name=URL"), "\(malformed.output)")
            let current = try await run("compass", ["call", "legal.current", #"{"type":"terms_of_service"}"#], cli)
            #expect(current.status == 0)
            #expect(current.output.contains(#""version" : "2025-12-12""#), "\(current.output)")
            let refused = try await run("compass", ["call", "legal.current", #"{"type":"cookies"}"#], cli)
            #expect(refused.status == 1)
            #expect(refused.output.contains("invalid_argument"))

            // Events: a follower started first sees the version the operator publishes.
            let follower = try await PeerProcess(
                "compass", arguments: ["events", "legal.published", "--services", "legal", "--count", "1"], environment: cli)
            try await Task.sleep(for: .milliseconds(500))
            let file = FileManager.default.temporaryDirectory.appendingPathComponent("terms-\(UUID().uuidString).md")
            try "# Terms\n\n## 1. Changed\n\nNew text.\n".write(to: file, atomically: true, encoding: .utf8)
            defer { try? FileManager.default.removeItem(at: file) }
            let publish = try await run(
                "compass", ["legal", "publish", "--type", "terms_of_service", "--version", "2026-02-01", "--file", file.path], cli)
            #expect(publish.status == 0, "\(publish.output)")
            #expect(await follower.waitForExit(timeout: .seconds(20)) == 0)
            #expect(follower.output.contains(#""version":"2026-02-01""#), "\(follower.output)")
            let verify = try await run("compass", ["audit", "verify"], cli)
            #expect(verify.status == 0 && verify.output.contains("valid"), "\(verify.output)")

            // A small load run: every acknowledged write is found in the store.
            let load = try await run("compass", ["load", "acceptances", "--max", "--concurrency", "16", "--duration", "2", "--json"], cli)
            #expect(load.status == 0, "\(load.output)")
            let report = try #require(
                try JSONSerialization.jsonObject(with: Data(load.output.utf8)) as? [String: Any], "\(load.output)")
            let acknowledged = try #require(report["acknowledged"] as? Int)
            #expect(acknowledged > 0)
            #expect(report["failed"] as? Int == 0)
            let stored = try #require(report["stored"] as? [String: Any])
            #expect(stored["checked"] as? Int == acknowledged)
            #expect(stored["missing"] as? Int == 0)
            let viaHTTP = try await run(
                "compass",
                [
                    "load", "acceptances", "--via", "http", "--gateway", "http://127.0.0.1:\(base + 30)", "--max",
                    "--concurrency", "8", "--duration", "2", "--users", "4", "--json",
                ], cli)
            #expect(viaHTTP.status == 0, "\(viaHTTP.output)")
            let httpReport = try #require(
                try JSONSerialization.jsonObject(with: Data(viaHTTP.output.utf8)) as? [String: Any], "\(viaHTTP.output)")
            #expect((httpReport["acknowledged"] as? Int ?? 0) > 0)
            #expect((httpReport["stored"] as? [String: Any])?["missing"] as? Int == 0, "\(viaHTTP.output)")
            // The baseline alone, on the test's database: a rate, and its scratch schema gone after.
            // Three seconds, not one: fresh-clone run 3, at load 33, saw pgbench's 32 clients commit
            // nothing in one second.
            var withDatabase = cli
            withDatabase["DATABASE_URL"] = database.url
            let baseline = try await run("compass", ["load", "baseline", "--duration", "3", "--json"], withDatabase)
            #expect(baseline.status == 0, "\(baseline.output)")
            let baselineReport = try #require(
                try JSONSerialization.jsonObject(with: Data(baseline.output.utf8)) as? [String: Any], "\(baseline.output)")
            #expect((baselineReport["pgbenchPerSecond"] as? Double ?? 0) > 0, "\(baseline.output)")
            let scratchSchemas = try await database.pool.withConnection { db in
                try db.query("SELECT count(*)::bigint FROM pg_namespace WHERE nspname = 'compass_load'")[0].decode(Int.self, column: 0)
            }
            #expect(scratchSchemas == 0)
            withDatabase["DATABASE_URL"] = ""
            let noDatabase = try await run("compass", ["load", "baseline", "--duration", "1"], withDatabase)
            #expect(noDatabase.status != 0)
            #expect(noDatabase.output.contains("DATABASE_URL"), "\(noDatabase.output)")
            let badFlags = try await run("compass", ["load", "acceptances", "--max", "--rate", "10"], cli)
            #expect(badFlags.status != 0)
            #expect(badFlags.output.contains("--rate") && badFlags.output.contains("--max"), "\(badFlags.output)")

            // A crashed child is restarted and becomes ready again.
            // Found by scanning /proc, which a loaded machine may race: look for a few seconds.
            var foundPID: Int32?
            for _ in 0..<50 where foundPID == nil {
                foundPID = listener(onPort: base + 24)
                if foundPID == nil { try await Task.sleep(for: .milliseconds(200)) }
            }
            let auditPID = try #require(foundPID, "no process listens on Audit's health port: \(up.output)")
            kill(auditPID, SIGKILL)
            var restarted = false
            for _ in 0..<100 where !restarted {
                try await Task.sleep(for: .milliseconds(200))
                if let pid = listener(onPort: base + 24), pid != auditPID,
                    try await self.status(of: "http://127.0.0.1:\(base + 24)/readyz") == 200
                {
                    restarted = true
                }
            }
            #expect(restarted, "\(up.output)")

            // Ctrl-C: every child stops, nothing listens any more.
            up.signal(SIGINT)
            #expect(await up.waitForExit(timeout: .seconds(60)) == 0)
            for port in [base + 1, base + 2, base + 3, base + 4, base + 20, base + 21, base + 22, base + 23, base + 24, base + 30] {
                #expect(listener(onPort: port) == nil, "port \(port) still open")
            }
            #expect(up.output.contains("stopped"))
        }
    }

    /// One JSON request; the reply's object (empty when not an object) and status.
    func http(_ method: String, _ url: String, _ body: [String: Any]? = nil) async throws -> ([String: Any], Int) {
        var request = URLRequest(url: URL(string: url)!)
        request.httpMethod = method
        if let body {
            request.httpBody = try JSONSerialization.data(withJSONObject: body)
            request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        }
        let (data, response) = try await URLSession.shared.data(for: request)
        let object = (try? JSONSerialization.jsonObject(with: data)) as? [String: Any] ?? [:]
        return (object, (response as? HTTPURLResponse)?.statusCode ?? 0)
    }

    func status(of url: String) async throws -> Int {
        var request = URLRequest(url: URL(string: url)!)
        request.timeoutInterval = 2
        guard let (_, response) = try? await URLSession.shared.data(for: request) else { return 0 }
        return (response as? HTTPURLResponse)?.statusCode ?? 0
    }

    /// The process listening on a loopback TCP port, from /proc (nil when none).
    func listener(onPort port: Int) -> Int32? {
        let hexPort = String(format: ":%04X", port)
        // Read to the end: /proc reports a size of 0, and String(contentsOfFile:) then reads one
        // page (4,050 of 132,750 bytes here with the test suite's sockets open), which missed the
        // port in a full run and made the "nothing listens any more" checks pass unseen.
        guard let data = try? FileHandle(forReadingFrom: URL(fileURLWithPath: "/proc/net/tcp")).readToEnd(),
            let table = String(data: data, encoding: .utf8)
        else { return nil }
        // state 0A = LISTEN; the inode identifies the socket.
        guard
            let row = table.split(separator: "\n").dropFirst().map({ $0.split(separator: " ") })
                .first(where: { $0.count > 9 && $0[1].hasSuffix(hexPort) && $0[3] == "0A" })
        else { return nil }
        let socket = "socket:[\(row[9])]"
        for entry in (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? [] {
            guard let pid = Int32(entry), let fds = try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(entry)/fd") else { continue }
            for fd in fds where (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(entry)/fd/\(fd)")) == socket {
                return pid
            }
        }
        return nil
    }

    /// Runs a product to completion: its exit status and everything it printed.
    func run(_ name: String, _ arguments: [String], _ environment: [String: String]) async throws -> (status: Int32, output: String) {
        let process = Process()
        process.executableURL = PeerProcess.productsDirectory.appendingPathComponent(name)
        process.arguments = arguments
        process.environment = environment
        let output = FileManager.default.temporaryDirectory.appendingPathComponent("compass-out-\(UUID().uuidString)")
        _ = FileManager.default.createFile(atPath: output.path, contents: nil)
        defer { try? FileManager.default.removeItem(at: output) }
        let handle = try FileHandle(forWritingTo: output)
        process.standardOutput = handle
        process.standardError = handle
        try process.run()
        await process.exited()
        try handle.close()
        return (process.terminationStatus, try String(contentsOf: output, encoding: .utf8))
    }
}

/// `compass keys generate`: every CURVE pair is a real pair, safe in any .env reader, and the
/// admitted-keys list names each peer's public key.
@Suite struct CompassKeysTests {
    @Test func generatedKeysAreRealPairsAndEnvFileSafe() async throws {
        let process = Process()
        process.executableURL = PeerProcess.productsDirectory.appendingPathComponent("compass")
        process.arguments = ["keys", "generate"]
        let pipe = Pipe()
        process.standardOutput = pipe
        try process.run()
        let text = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        await process.exited()
        #expect(process.terminationStatus == 0)
        var values: [String: String] = [:]
        for line in text.split(separator: "\n") where !line.hasPrefix("#") {
            let parts = line.split(separator: "=", maxSplits: 1).map(String.init)
            try #require(parts.count == 2, "\(line)")
            values[parts[0]] = parts[1]
            #expect(!parts[1].contains(where: { "$#'\" ".contains($0) }), "\(parts[0]) needs quoting")
        }
        var admitted: [String] = []
        for peer in ["legal", "accounts", "documents", "audit", "gateway", "operator"] {
            let secret = try #require(values["\(peer.uppercased())_SECRET_KEY"])
            let pair = try CurveKeyPair(secretKey: secret)
            #expect(pair.publicKey == values["\(peer.uppercased())_PUBLIC_KEY"])
            admitted.append("\(peer)=\(pair.publicKey)")
        }
        #expect(values["BUS_ADMITTED_KEYS"] == admitted.joined(separator: ","))
        for signing in ["AUDIT_SIGNING_KEY", "ACCOUNTS_SESSION_SIGNING_KEY"] {
            #expect(Data(base64Encoded: values[signing] ?? "")?.count == 32, "\(signing)")
        }
        #expect((values["POSTGRES_PASSWORD"]?.count ?? 0) >= 32)
        // Deletion certificates get a key of their own, `cert-YYYYMMDD=<seed>`, which Accounts reads.
        let certificate = try #require(values["ACCOUNTS_CERTIFICATE_SIGNING_KEY"])
        let (kid, seed) = try #require(certificate.split(separator: "=", maxSplits: 1).map(String.init).twoParts)
        #expect(kid.hasPrefix("cert-") && kid.count == 13 && Data(base64Encoded: seed)?.count == 32, "\(kid)")
        #expect((try? SessionKeySet(currentConfiguration: certificate)) != nil)
        #expect(seed != values["ACCOUNTS_SESSION_SIGNING_KEY"])
    }
}

extension Array where Element == String {
    fileprivate var twoParts: (String, String)? { count == 2 ? (self[0], self[1]) : nil }
}
