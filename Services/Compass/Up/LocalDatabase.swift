import Foundation

/// The throwaway PostgreSQL cluster `compass up` runs when no `DATABASE_URL` is given: the
/// project's `deploy/pg` script (which also handles running as root through the `postgres`
/// user), on a cluster kept in `.local/pg-run` between runs.
struct LocalDatabase {
    let script: URL
    let directory: URL

    /// Finds `deploy/pg` above the current folder or above the executable.
    static func locate(executable: URL) -> LocalDatabase? {
        let starts = [URL(fileURLWithPath: FileManager.default.currentDirectoryPath), executable.deletingLastPathComponent()]
        for start in starts {
            var folder = start.standardizedFileURL
            while folder.path != "/" {
                let script = folder.appendingPathComponent("deploy/pg")
                if FileManager.default.isExecutableFile(atPath: script.path) {
                    return LocalDatabase(script: script, directory: folder.appendingPathComponent(".local/pg-run"))
                }
                folder.deleteLastPathComponent()
            }
        }
        return nil
    }

    var projectRoot: URL { script.deletingLastPathComponent().deletingLastPathComponent() }

    /// Starts the cluster (created first if needed, or anew with `fresh`) and returns its URL.
    func start(fresh: Bool) async throws -> String {
        try await offPool { try self.startBlocking(fresh: fresh) }
    }

    func stop() async {
        try? await offPool { _ = try self.run(["stop", "--dir", self.directory.path]) }
    }

    private func startBlocking(fresh: Bool) throws -> String {
        let output = try run(["start", "--dir", directory.path] + (fresh ? ["--fresh"] : []))
        for line in output.split(separator: "\n") where line.hasPrefix("export DATABASE_URL=") {
            return String(line.dropFirst("export DATABASE_URL=".count))
        }
        throw CLIError("deploy/pg printed no DATABASE_URL:\n\(output)")
    }

    /// Runs the script with its output in files, not pipes: the server pg_ctl starts inherits
    /// the script's descriptors and keeps them open, so reading a pipe to its end would wait for
    /// the server to exit. Spawned and reaped here (posix_spawn, waitpid) rather than through
    /// Foundation's Process, which was seen not to notice this script's exit (it left a zombie
    /// after starting the daemon). Blocking, so callers run it off the cooperative pool.
    private func run(_ arguments: [String]) throws -> String {
        let folder = FileManager.default.temporaryDirectory.path
        let outputPath = "\(folder)/compass-pg-\(getpid()).out"
        let errorsPath = "\(folder)/compass-pg-\(getpid()).err"
        defer {
            unlink(outputPath)
            unlink(errorsPath)
        }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, outputPath, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        posix_spawn_file_actions_addopen(&actions, 2, errorsPath, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        let argv = ([script.path] + arguments).map { strdup($0) } + [nil]
        defer { for pointer in argv { free(pointer) } }
        var pid: pid_t = 0
        let spawned = posix_spawn(&pid, script.path, &actions, nil, argv, environ)
        guard spawned == 0 else { throw CLIError("cannot run \(script.path): \(String(cString: strerror(spawned)))") }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) == -1 && errno == EINTR {}
        let exited = (status & 0x7f) == 0 && ((status >> 8) & 0xff) == 0
        guard exited else {
            let problems = (try? String(contentsOfFile: errorsPath, encoding: .utf8)) ?? ""
            throw CLIError("deploy/pg \(arguments[0]) failed: \(problems)")
        }
        return (try? String(contentsOfFile: outputPath, encoding: .utf8)) ?? ""
    }
}
