import Foundation

/// pgbench's one-INSERT-per-commit rate: what a service that does one INSERT and one commit per
/// request (a PostgREST-style API) reaches at best on the same database. The baseline every
/// throughput figure of this project is quoted against.
public enum Pgbench {
    /// Runs `script` with `clients` connections for `seconds` and returns pgbench's tps; `prepared`
    /// runs it with `-M prepared` (parsed and planned once per connection, as a service's
    /// prepared statements are), else in pgbench's default simple-query mode.
    ///
    /// pgbench ends a timed run with SIGALRM, and a spawned process inherits its parent thread's
    /// signal mask: from a Dispatch or cooperative-pool thread (which block signals) the alarm
    /// never arrives and pgbench runs forever. So it is started from a thread of its own with
    /// every signal unblocked, which also keeps the blocking wait off the cooperative pool.
    public static func run(url: String, script: String, clients: Int, seconds: Int, prepared: Bool = false) async throws -> Double {
        try await withCheckedThrowingContinuation { continuation in
            Thread {
                var none = sigset_t()
                sigemptyset(&none)
                pthread_sigmask(SIG_SETMASK, &none, nil)
                continuation.resume(
                    with: Result { try runBlocking(url: url, script: script, clients: clients, seconds: seconds, prepared: prepared) })
            }.start()
        }
    }

    private static func runBlocking(url: String, script: String, clients: Int, seconds: Int, prepared: Bool) throws -> Double {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("pgbench-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("insert.sql")
        try script.write(to: file, atomically: true, encoding: .utf8)
        let output = try Command.run(
            executable(),
            ["-n", "-c", String(clients), "-j", "2", "-T", String(seconds)] + (prepared ? ["-M", "prepared"] : []) + ["-f", file.path, url])
        guard let line = output.split(separator: "\n").first(where: { $0.hasPrefix("tps = ") }),
            let tps = Double(line.dropFirst("tps = ".count).prefix { $0 == "." || $0.isNumber })
        else { throw LoadError("pgbench printed no tps:\n\(output)") }
        return tps
    }

    static func executable() -> String {
        for candidate in ["/usr/lib/postgresql/15/bin/pgbench", "/usr/bin/pgbench"]
        where FileManager.default.isExecutableFile(atPath: candidate) {
            return candidate
        }
        return "pgbench"
    }
}

public struct LoadError: Error, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}
