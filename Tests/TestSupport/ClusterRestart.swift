import Foundation

/// How `deploy/pg restart` stops the server: `fast` (clients are told, backends exit cleanly)
/// or `immediate` (backends are killed, crash recovery on start).
public enum RestartMode: String, Sendable {
    case fast, immediate
}

extension TestDatabase {
    /// The repository root, found from this file's path (`Tests/TestSupport/…`).
    public static var repositoryRoot: URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
    }

    /// Restarts the test cluster with `deploy/pg restart --dir $COMPASS_PG_DIR --mode <mode>`
    /// (staying down for `downFor` between stop and start) and returns when it accepts
    /// connections again. Only allowed inside
    /// ``withExclusiveCluster(maxConnections:checkoutTimeout:_:)``: other tests would break.
    public static func restartCluster(mode: RestartMode, downFor: Duration = .zero) async throws {
        guard ClusterGate.holdsExclusive else {
            throw TestSupportError("restartCluster needs TestDatabase.withExclusiveCluster")
        }
        guard let directory = ProcessInfo.processInfo.environment["COMPASS_PG_DIR"], !directory.isEmpty else {
            throw TestSupportError("COMPASS_PG_DIR is not set: run deploy/test, which starts a throwaway PostgreSQL")
        }
        let script = repositoryRoot.appendingPathComponent("deploy/pg").path
        // Foundation's Process (Linux) learns that a child ended when a socket it passes to the
        // child reaches EOF. `pg_ctl start` leaves a daemon (the postmaster) that would inherit
        // that socket and hold it open forever, so close every inherited descriptor above
        // stderr before running the script.
        let closeInherited = #"for fd in /proc/$$/fd/*; do fd=${fd##*/}; [ "$fd" -gt 2 ] && eval "exec $fd>&-"; done; exec "$0" "$@""#
        try await run(
            "/bin/bash",
            [
                "-c", closeInherited, script, "restart", "--dir", directory, "--mode", mode.rawValue,
                "--down", String(format: "%.3f", Double(downFor.components.seconds) + Double(downFor.components.attoseconds) / 1e18),
            ])
    }

    /// Runs a program and waits for it without blocking a cooperative thread.
    static func run(_ executable: String, _ arguments: [String]) async throws {
        let result = try await ChildProcess.run(executable, arguments)
        guard result.status == 0 else {
            throw TestSupportError("\(executable) \(arguments.joined(separator: " ")) exited with \(result.status): \(result.errors)")
        }
    }
}
