import Foundation

/// pgbench's one-INSERT-per-commit rate into `audit.records` of the same database: what a service
/// that does one INSERT and one commit per request (a PostgREST-style API) can reach at best.
enum PgbenchBaseline {
    static let script = """
        \\set chain 1000 + :client_id
        INSERT INTO audit.records (chain, position, record_id, subject, document_type, version, digest, action,
            recorded_ms, client_ip, user_agent, ip_hmac, ua_hmac, idempotency_hash, prev_hash, hash)
        VALUES (:chain, nextval('public.bench_positions'), gen_random_uuid(), gen_random_uuid(), 'terms_of_service', '1.0',
            encode(sha256('terms'::bytea), 'hex'), 'accept', (extract(epoch FROM now()) * 1000)::bigint,
            '203.0.113.7', 'pgbench', sha256('ip'::bytea), sha256('ua'::bytea), gen_random_uuid()::text,
            sha256('previous'::bytea), sha256(random()::text::bytea));

        """

    /// Runs pgbench with `clients` connections for `seconds` and returns its tps.
    ///
    /// pgbench ends a timed run with SIGALRM, and a spawned process inherits its parent thread's
    /// signal mask: from a Dispatch or cooperative-pool thread (which block signals) the alarm
    /// never arrives and pgbench runs forever. So it is started from a thread of its own with
    /// every signal unblocked, which also keeps the blocking wait off the cooperative pool.
    static func run(url: String, clients: Int, seconds: Int) async throws -> Double {
        try await withCheckedThrowingContinuation { continuation in
            Thread {
                var none = sigset_t()
                sigemptyset(&none)
                pthread_sigmask(SIG_SETMASK, &none, nil)
                continuation.resume(with: Result { try runBlocking(url: url, clients: clients, seconds: seconds) })
            }.start()
        }
    }

    private static func runBlocking(url: String, clients: Int, seconds: Int) throws -> Double {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("audit-bench-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("insert.sql")
        try script.write(to: file, atomically: true, encoding: .utf8)
        let output = try runCommand(
            pgbench(), ["-n", "-c", String(clients), "-j", "2", "-T", String(seconds), "-f", file.path, url])
        guard let line = output.split(separator: "\n").first(where: { $0.hasPrefix("tps = ") }),
            let tps = Double(line.dropFirst("tps = ".count).prefix { $0 == "." || $0.isNumber })
        else { throw BenchError("pgbench printed no tps:\n\(output)") }
        return tps
    }

    static func pgbench() -> String {
        for candidate in ["/usr/lib/postgresql/15/bin/pgbench", "/usr/bin/pgbench"]
        where FileManager.default.isExecutableFile(atPath: candidate) {
            return candidate
        }
        return "pgbench"
    }

    static func runCommand(_ path: String, _ arguments: [String]) throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: path.hasPrefix("/") ? path : "/usr/bin/env")
        process.arguments = path.hasPrefix("/") ? arguments : [path] + arguments
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        try process.run()
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        let text = String(decoding: data, as: UTF8.self)
        guard process.terminationStatus == 0 else { throw BenchError("\(path) failed:\n\(text)") }
        return text
    }
}

struct BenchError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
