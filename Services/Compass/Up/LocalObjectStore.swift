import Foundation

/// The SeaweedFS `compass up --s3` runs for Documents' bytes: one `weed server -s3` (master,
/// volume server, filer and S3 gateway in one process) on loopback ports beside the stack's, its
/// data in `.local/s3-run` (`.local/s3-run-<base port>` with `--base-port`). The data is kept between runs as the local database is, and emptied
/// with it by `--fresh`: a database kept with an emptied bucket would hold rows whose bytes are gone.
struct LocalObjectStore {
    let weed: URL
    let directory: URL
    let s3Port: Int
    let bucket = "compass-documents"
    let region = "us-east-1"

    /// `weed` on PATH, else the one deploy/lib/install-deps puts in `.local/py/seaweedfs`.
    static func locate(projectRoot: URL, basePort: Int?) -> LocalObjectStore? {
        let onPath = (ProcessInfo.processInfo.environment["PATH"] ?? "").split(separator: ":").map {
            URL(fileURLWithPath: String($0)).appendingPathComponent("weed")
        }
        let candidates = onPath + [projectRoot.appendingPathComponent(".local/py/seaweedfs/bin/weed")]
        guard let weed = candidates.first(where: { FileManager.default.isExecutableFile(atPath: $0.path) }) else { return nil }
        // The stack's layout goes to base+30; the store takes base+40…43. weed's gRPC ports are
        // these plus 10000, so the default 5840 stays clear of the stack's and of 8080.
        // A stack on a base port of its own (a second stack, a test) keeps a store of its own too.
        let folder = basePort.map { ".local/s3-run-\($0)" } ?? ".local/s3-run"
        return LocalObjectStore(weed: weed, directory: projectRoot.appendingPathComponent(folder), s3Port: (basePort ?? 5800) + 40)
    }

    var masterPort: Int { s3Port + 1 }
    var volumePort: Int { s3Port + 2 }
    var filerPort: Int { s3Port + 3 }
    /// weed's gRPC ports, given rather than left to weed's default (each HTTP port + 10000), which
    /// lands in another stack's range when `--base-port` moves them (a test's base 15000 put them
    /// in 25040-25043, where a second stack's services listen).
    var grpcPorts: (master: Int, volume: Int, filer: Int, s3: Int) { (s3Port + 4, s3Port + 5, s3Port + 6, s3Port + 7) }
    var endpoint: String { "http://127.0.0.1:\(s3Port)" }

    /// The process to supervise. Its chatty glog output goes to files in the data folder (errors
    /// still reach the stack's output); the
    /// admin identity (AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY) comes from the environment.
    func spec(keys: S3Keys, colour: Int) throws -> Supervisor.Spec {
        let logs = directory.appendingPathComponent("logs")
        try FileManager.default.createDirectory(at: logs, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        var environment = ProcessInfo.processInfo.environment
        environment["AWS_ACCESS_KEY_ID"] = keys.accessKeyID
        environment["AWS_SECRET_ACCESS_KEY"] = keys.secretAccessKey
        // Go's soft memory limit: at Go's defaults weed's heap grew 300 MiB over a 1 GiB transfer,
        // with it 48 MiB (deploy/BENCHMARKS.md, Documents). compose's s3 profile sets the same.
        if environment["GOMEMLIMIT"] == nil { environment["GOMEMLIMIT"] = "256MiB" }
        return Supervisor.Spec(
            name: "seaweedfs", executable: weed, environment: environment, readyURL: "\(endpoint)/healthz", colour: colour,
            arguments: [
                "-logtostderr=false", "-alsologtostderr=false", "-stderrthreshold=ERROR", "-logdir=\(logs.path)", "server", "-dir=\(directory.path)",
                "-ip=127.0.0.1", "-ip.bind=127.0.0.1",
                "-master.port=\(masterPort)", "-volume.port=\(volumePort)", "-filer.port=\(filerPort)", "-s3",
                "-s3.port=\(s3Port)", "-master.port.grpc=\(grpcPorts.master)", "-volume.port.grpc=\(grpcPorts.volume)",
                "-filer.port.grpc=\(grpcPorts.filer)", "-s3.port.grpc=\(grpcPorts.s3)",
                "-volume.max=0", "-master.volumeSizeLimitMB=1024", "-master.telemetry=false",
                // Off: weed's Iceberg and Lance listeners take fixed ports (8181, 9101), which another
                // weed on the machine (a second stack, the tests') holds; Documents needs neither.
                "-s3.port.iceberg=0", "-s3.port.lance=0",
            ],
            // weed 4.48 may not finish its own shutdown (its filer keeps retrying the volume server
            // it stopped); what it acknowledged is in its volume files, so it is not waited for long.
            stopGrace: .seconds(3))
    }

    /// Empties the data folder (`--fresh`).
    func wipe() throws {
        if FileManager.default.fileExists(atPath: directory.path) { try FileManager.default.removeItem(at: directory) }
    }

    /// Makes the bucket if it is not there yet (weed's admin shell, which needs no S3 signature),
    /// retrying while the filer finishes starting; throws if it never appears.
    func ensureBucket(timeout: Duration = .seconds(60)) async throws {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            let listed = try await shell("s3.bucket.list")
            if listed.split(separator: "\n").contains(where: { $0.split(separator: "\t").first == "  \(bucket)" }) { return }
            _ = try await shell("s3.bucket.create -name \(bucket)")
            try await Task.sleep(for: .milliseconds(500))
        }
        throw CLIError("SeaweedFS did not make the bucket \(bucket) within \(timeout) (logs in \(directory.path)/logs)")
    }

    /// The stack's Documents variables for this store.
    func documentsEnvironment(keys: S3Keys) -> [String: String] {
        [
            "DOCUMENTS_STORAGE": "s3", "DOCUMENTS_S3_ENDPOINT": endpoint, "DOCUMENTS_S3_REGION": region, "DOCUMENTS_S3_BUCKET": bucket,
            "DOCUMENTS_S3_PATH_STYLE": "true", "DOCUMENTS_S3_ACCESS_KEY_ID": keys.accessKeyID,
            "DOCUMENTS_S3_SECRET_ACCESS_KEY": keys.secretAccessKey,
        ]
    }

    /// One `weed shell` command, its output returned. Blocking, so off the cooperative pool.
    private func shell(_ command: String) async throws -> String {
        let weed = self.weed
        // SeaweedFS's address form "host:port.grpcPort": given alone, the shell would dial port + 10000.
        let master = "127.0.0.1:\(masterPort).\(grpcPorts.master)"
        return try await offPool {
            let process = Process()
            // Bounded: a shell that cannot reach the master waits for it forever, and the bucket's
            // retry loop (``ensureBucket``) would never see its deadline.
            process.executableURL = URL(fileURLWithPath: "/usr/bin/timeout")
            process.arguments = ["15", weed.path, "shell", "-master=\(master)"]
            let input = Pipe()
            let output = Pipe()
            process.standardInput = input
            process.standardOutput = output
            process.standardError = FileHandle.nullDevice
            try process.run()
            input.fileHandleForWriting.write(Data((command + "\n").utf8))
            try input.fileHandleForWriting.close()
            let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            process.waitUntilExit()
            return text
        }
    }
}

/// The local store's credentials, made once and kept in `.local/keys` like the stack's other keys.
struct S3Keys {
    let accessKeyID: String
    let secretAccessKey: String

    static func load(folder: URL) throws -> S3Keys {
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        func kept(_ file: String, _ make: () -> String) throws -> String {
            let path = folder.appendingPathComponent(file).path
            if let text = try? String(contentsOfFile: path, encoding: .utf8), !text.isEmpty {
                return text.trimmingCharacters(in: .whitespacesAndNewlines)
            }
            let value = make()
            guard FileManager.default.createFile(atPath: path, contents: Data((value + "\n").utf8), attributes: [.posixPermissions: 0o600]) else {
                throw CLIError("cannot write \(path)")
            }
            return value
        }
        return S3Keys(
            accessKeyID: try kept("s3-access-key-id") { "compass-local-" + Keys.Generate.randomBytes(6).map { String(format: "%02x", $0) }.joined() },
            secretAccessKey: try kept("s3-secret-access-key") { Keys.Generate.randomBase64URL(bytes: 32) })
    }
}
