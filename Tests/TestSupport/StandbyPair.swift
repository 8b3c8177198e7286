import Foundation
import Locks
import Postgres

/// A PostgreSQL primary and its synchronous streaming standby, two clusters of their own in a
/// folder of their own under `.local/` (`deploy/pg start` and `deploy/pg start-standby`), for the
/// failover test: the primary can be SIGKILLed and the standby promoted while services run on the
/// pair's multi-host URL (`postgresql://…@h1:p1,h2:p2/…?target_session_attrs=read-write`).
/// The shared test cluster is not touched.
public final class StandbyPair: Sendable {
    public let folder: URL
    /// The admin's multi-host URL of the pair's `compass` database (libpq picks the read-write one).
    public let url: String
    private let primaryKilled = LockedFlag()

    private init(folder: URL, url: String) {
        self.folder = folder
        self.url = url
    }

    var primary: String { folder.appendingPathComponent("primary").path }
    var standby: String { folder.appendingPathComponent("standby").path }

    /// Starts a pair, runs `body`, then stops both clusters and removes their folder. Holds the
    /// shared cluster's gate exclusively meanwhile: no other database test runs beside it, for
    /// the CPU (four debug-built services under load take both cores), as ``TestDatabase/withExclusiveCluster(maxConnections:checkoutTimeout:_:)`` does.
    public static func with<T>(_ body: (StandbyPair) async throws -> T) async throws -> T {
        try await ClusterGate.holding(.exclusive) {
            let folder = TestDatabase.repositoryRoot.appendingPathComponent(".local/failover-\(UUID().uuidString.prefix(8).lowercased())")
            let result: Result<T, any Error>
            // As root, a folder the postgres user cannot reach is replaced by one under /var/tmp
            // (deploy/pg prints where: COMPASS_PG_DIR); removed with the requested one.
            let relocated = Locked<[String]>([])
            do {
                let primaryOutput = try await script(["start", "--dir", folder.appendingPathComponent("primary").path, "--fresh"])
                relocated.withLock { $0.append(contentsOf: Self.dataFolders(primaryOutput)) }
                let output = try await script([
                    "start-standby", "--dir", folder.appendingPathComponent("standby").path,
                    "--primary-dir", folder.appendingPathComponent("primary").path, "--fresh",
                ])
                relocated.withLock { $0.append(contentsOf: Self.dataFolders(output)) }
                guard let line = output.split(separator: "\n").first(where: { $0.hasPrefix("export DATABASE_URL=") }) else {
                    throw TestSupportError("deploy/pg start-standby printed no DATABASE_URL: \(output)")
                }
                let pair = StandbyPair(folder: folder, url: String(line.dropFirst("export DATABASE_URL=".count)))
                do { result = .success(try await body(pair)) } catch { result = .failure(error) }
                _ = try? await script(["stop", "--dir", pair.standby])
                // A killed primary's postmaster.pid names a process that is gone (its number may be
                // another process's by now): nothing to stop then.
                if !pair.primaryKilled.isSet { _ = try? await script(["stop", "--dir", pair.primary]) }
            } catch {
                result = .failure(error)
                _ = try? await script(["stop", "--dir", folder.appendingPathComponent("standby").path])
                _ = try? await script(["stop", "--dir", folder.appendingPathComponent("primary").path])
            }
            try? FileManager.default.removeItem(at: folder)
            for path in relocated.withLock({ $0 }) { try? FileManager.default.removeItem(atPath: path) }
            return try result.get()
        }
    }

    /// The cluster folders `deploy/pg` printed (`export COMPASS_PG_DIR=…`).
    static func dataFolders(_ output: String) -> [String] {
        output.split(separator: "\n").filter { $0.hasPrefix("export COMPASS_PG_DIR=") }.map { String($0.dropFirst("export COMPASS_PG_DIR=".count)) }
    }

    /// `kill -9` of the primary's postmaster and every process of it, as a crashed host.
    public func killPrimary() async throws {
        primaryKilled.set()
        try await Self.script(["kill", "--dir", primary])
    }

    /// `pg_ctl promote` of the standby; returns once it accepts writes.
    public func promoteStandby() async throws {
        try await Self.script(["promote", "--dir", standby])
    }

    /// A fresh database on the pair (made on the primary, streamed to the standby) with a pool of
    /// the admin's on the multi-host URL, as ``TestDatabase/withDatabase(maxConnections:checkoutTimeout:_:)``
    /// makes one on the shared cluster. Dropped with the pair.
    public func withDatabase<T>(maxConnections: Int = 8, _ body: (TestDatabaseInstance) async throws -> T) async throws -> T {
        let name = "test_" + UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: "")
        let admin = try await PostgresConnection.connect(
            configuration: try PostgresConfiguration(url: url, applicationName: "compass-tests"), logger: TestDatabase.logger())
        // The name is generated above (hex digits only): safe in DDL, which takes no parameters.
        try await admin.run { db in try db.executeScript("CREATE DATABASE \(name)") }
        await admin.close()
        guard let slash = url.range(of: "/compass?") else { throw TestSupportError("the pair's URL has no /compass? part: \(url)") }
        let databaseURL = url.replacingCharacters(in: slash, with: "/\(name)?")
        let pool = PostgresPool(
            configuration: try PostgresConfiguration(url: databaseURL, applicationName: "compass-tests"), maxConnections: maxConnections,
            checkoutTimeout: .seconds(10), logger: TestDatabase.logger())
        let result: Result<T, any Error>
        do { result = .success(try await body(TestDatabaseInstance(name: name, url: databaseURL, pool: pool))) } catch {
            result = .failure(error)
        }
        await pool.close()
        return try result.get()
    }

    /// Runs `deploy/pg` with `arguments`; its standard output. `pg_ctl start` leaves a daemon
    /// that would inherit (and hold open) the pipe Foundation's Process watches for the child's
    /// end, so every inherited descriptor above stderr is closed first, as ``TestDatabase/restartCluster(mode:downFor:)`` does.
    @discardableResult
    static func script(_ arguments: [String]) async throws -> String {
        let closeInherited = #"for fd in /proc/$$/fd/*; do fd=${fd##*/}; [ "$fd" -gt 2 ] && eval "exec $fd>&-"; done; exec "$0" "$@""#
        let deploy = TestDatabase.repositoryRoot.appendingPathComponent("deploy/pg").path
        let result = try await ChildProcess.run("/bin/bash", ["-c", closeInherited, deploy] + arguments)
        guard result.status == 0 else {
            throw TestSupportError("deploy/pg \(arguments.joined(separator: " ")) exited with \(result.status): \(result.errors)")
        }
        return result.output
    }
}

/// Set once, read from any task.
private final class LockedFlag: Sendable {
    private let value = LockedValue(false)
    func set() { value.withLock { $0 = true } }
    var isSet: Bool { value.withLock { $0 } }
}

/// A value the pair's set-up and clean-up share.
private final class Locked<Value: Sendable>: Sendable {
    private let value: LockedValue<Value>
    init(_ initial: Value) { value = LockedValue(initial) }
    func withLock<T: Sendable>(_ body: (inout sending Value) -> sending T) -> T { value.withLock(body) }
}
