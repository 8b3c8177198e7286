import Bus
import Contracts
import Crypto
import Foundation
import Locks
import ObjectStorage
import TestSupport
import Testing

/// The real Documents executable on a private database, with a client of it: what the Documents
/// tests run against. The service can be killed and started again on the same address and
/// database. Its `account.deleted` source is an Accounts address that ``AccountsPeers`` may fill.
final class DocumentsHarness: Sendable {
    let database: TestDatabaseInstance
    let rpc: String
    let client: RPCClient
    let environment: [String: String]
    /// Where new uploads go, and with `s3` the store and this run's own bucket in it.
    let storage: Storage
    let objectStore: (server: SeaweedFS, bucket: String)?
    private let process: LockedValue<PeerProcess?>

    /// Limits the tests rely on: 300 MiB files, a 700 MiB quota, 1 MiB chunks.
    static let maxFileSize: Int64 = 300 << 20
    static let quota: Int64 = 700 << 20
    static let chunkSize = 1 << 20

    /// S3 parts in the tests: S3's minimum, so files of a few MiB already take several parts.
    static let partSize = 5 << 20

    private init(
        database: TestDatabaseInstance, rpc: String, client: RPCClient, environment: [String: String], storage: Storage,
        objectStore: (server: SeaweedFS, bucket: String)?, process: PeerProcess
    ) {
        self.database = database
        self.rpc = rpc
        self.client = client
        self.environment = environment
        self.storage = storage
        self.objectStore = objectStore
        self.process = LockedValue(process)
    }

    /// Runs `body` with Documents up on a fresh database; `accounts` gives the Accounts addresses it
    /// follows (unused addresses by default: nothing publishes there).
    /// `rpc` fixes Documents' address, for peers started before it that must reach it. With
    /// `storage` `.s3` new uploads go to a bucket of this run's own in `seaweed` (the test
    /// process's shared SeaweedFS unless a test that stops its store brings its own).
    static func run(
        storage: Storage = .postgres, seaweed: SeaweedFS? = nil, accounts: (rpc: String, events: String)? = nil,
        database given: TestDatabaseInstance? = nil, settings: [String: String] = [:], rpc: String = ipcEndpoint(),
        _ body: (DocumentsHarness) async throws -> Void
    ) async throws {
        var objectStore: (server: SeaweedFS, bucket: String)?
        if storage == .s3 {
            let server: SeaweedFS
            if let seaweed { server = seaweed } else { server = try await SharedSeaweedFS.get() }
            let bucket = "docs-" + UUID().uuidString.lowercased().prefix(18)
            try await server.makeBucket(bucket)
            objectStore = (server, bucket)
        }
        if let given {
            try await run(accounts: accounts, on: given, objectStore: objectStore, settings: settings, rpc: rpc, body)
        } else {
            try await TestDatabase.withDatabase { database in
                try await run(accounts: accounts, on: database, objectStore: objectStore, settings: settings, rpc: rpc, body)
            }
        }
    }

    /// The variables that put new uploads in `bucket` of `server`.
    static func s3Environment(_ server: SeaweedFS, bucket: String) -> [String: String] {
        [
            "DOCUMENTS_STORAGE": "s3", "DOCUMENTS_S3_ENDPOINT": server.endpoint.absoluteString, "DOCUMENTS_S3_REGION": "us-east-1",
            "DOCUMENTS_S3_BUCKET": bucket, "DOCUMENTS_S3_ACCESS_KEY_ID": server.accessKeyID,
            "DOCUMENTS_S3_SECRET_ACCESS_KEY": server.secretAccessKey, "DOCUMENTS_S3_PATH_STYLE": "true",
            "DOCUMENTS_S3_PART_SIZE": "\(partSize)",
        ]
    }

    private static func run(
        accounts: (rpc: String, events: String)?, on database: TestDatabaseInstance, objectStore: (server: SeaweedFS, bucket: String)?,
        settings: [String: String], rpc: String, _ body: (DocumentsHarness) async throws -> Void
    ) async throws {
        var environment = ServiceEnvironment.make(databaseURL: database.url, rpc: rpc, logLevel: "error")
        environment["ACCOUNTS_RPC_ENDPOINTS"] = accounts?.rpc ?? ipcEndpoint()
        environment["ACCOUNTS_EVENTS_ENDPOINTS"] = accounts?.events ?? ipcEndpoint()
        environment["DOCUMENTS_MAX_FILE_SIZE"] = "\(maxFileSize)"
        environment["DOCUMENTS_USER_QUOTA"] = "\(quota)"
        environment["DOCUMENTS_CHUNK_SIZE"] = "\(chunkSize)"
        environment["DOCUMENTS_SHARE_GRANT_LIFETIME"] = "2s"
        if let objectStore { environment.merge(s3Environment(objectStore.server, bucket: objectStore.bucket)) { _, s3 in s3 } }
        environment.merge(settings) { _, given in given }
        let process = try await PeerProcess("Documents", environment: environment)
        var options = RPCClientOptions()
        options.defaultTimeout = .seconds(60)
        let client = try await RPCClient.connect(to: "documents", endpoints: [rpc], options: options, logger: testLogger())
        let harness = DocumentsHarness(
            database: database, rpc: rpc, client: client, environment: environment, storage: objectStore == nil ? .postgres : .s3,
            objectStore: objectStore, process: process)
        let result: Result<Void, any Error>
        do { result = .success(try await body(harness)) } catch {
            result = .failure(error)
            if let output = harness.process.withLock({ $0?.output }) { print("Documents output:\n\(output)") }
        }
        await client.close()
        await harness.stop()
        try result.get()
    }

    /// SIGTERM, then a bounded wait; SIGKILL if it does not exit.
    func stop() async {
        guard
            let process = process.withLock({ value in
                defer { value = nil }
                return value
            })
        else { return }
        process.signal(SIGTERM)
        if await process.waitForExit(timeout: .seconds(15)) == nil { process.kill() }
    }

    /// SIGKILL: whatever is in flight is cut.
    func kill() async {
        guard
            let process = process.withLock({ value in
                defer { value = nil }
                return value
            })
        else { return }
        process.kill()
        _ = await process.waitForExit(timeout: .seconds(15))
    }

    /// Starts the service again on the same address and database.
    func start() async throws {
        let started = try await PeerProcess("Documents", environment: environment)
        process.withLock { $0 = started }
    }

    /// A client of this run's bucket (`.s3` runs only).
    func bucketClient() throws -> S3Client {
        guard let objectStore else { throw TestSupportError("this run has no bucket") }
        return try objectStore.server.client(bucket: objectStore.bucket)
    }

    /// The keys in this run's bucket under `prefix`.
    func objectKeys(prefix: String = "documents/") async throws -> [String] {
        let client = try bucketClient()
        var keys: [String] = []
        var token: String?
        repeat {
            let page = try await client.listObjects(prefix: prefix, continuationToken: token)
            keys += page.objects.map(\.key)
            token = page.nextContinuationToken
        } while token != nil
        return keys
    }

    /// Unfinished multipart uploads in this run's bucket (0 without one).
    func multipartUploads() async throws -> Int {
        guard objectStore != nil else { return 0 }
        return try await bucketClient().listMultipartUploads(prefix: "documents/").count
    }

    /// Objects still queued for removal.
    func queuedObjectRemovals() async throws -> Int {
        try await database.pool.withConnection { db in
            try db.query("SELECT count(*) FROM documents.object_removals")[0].decode(Int.self, column: 0)
        }
    }

    // MARK: Calls

    static func user(_ id: UUID) -> Principal { .user(id.uuidString.lowercased()) }

    func create(
        owner: UUID, type: DocumentType = .transcript, title: String = "Transcript", fileType: String? = "application/pdf",
        schoolId: String? = nil, fileName: String? = "transcript.pdf", length: Int64
    ) async throws -> Document {
        try await client.call(
            DocumentsCreate.self,
            .init(ownerId: owner, type: type, title: title, fileType: fileType, schoolId: schoolId, fileName: fileName, length: length),
            principal: Self.user(owner))
    }

    func append(_ id: UUID, owner: UUID, offset: Int64, _ chunk: Data) async throws -> UploadStatus {
        try await client.call(DocumentsAppend.self, .init(id: id, offset: offset), principal: Self.user(owner), attachments: [chunk])
    }

    /// Uploads `bytes` whole in chunks of at most ``chunkSize``.
    @discardableResult
    func upload(_ id: UUID, owner: UUID, _ bytes: Data, from start: Int = 0) async throws -> UploadStatus {
        var offset = start
        var status = try await client.call(DocumentsUploadStatus.self, .init(id: id), principal: Self.user(owner))
        while offset < bytes.count {
            let end = min(offset + Self.chunkSize, bytes.count)
            status = try await append(id, owner: owner, offset: Int64(offset), bytes.subdata(in: offset..<end))
            offset = end
        }
        return status
    }

    /// Creates and uploads a whole small document.
    func store(
        owner: UUID, _ bytes: Data, type: DocumentType = .transcript, title: String = "Transcript", fileType: String? = "application/pdf",
        schoolId: String? = nil
    ) async throws -> Document {
        let created = try await create(owner: owner, type: type, title: title, fileType: fileType, schoolId: schoolId, length: Int64(bytes.count))
        guard bytes.count > 0 else { return created }
        let status = try await upload(created.id, owner: owner, bytes)
        guard let document = status.document else { throw TestSupportError("upload of \(created.id) did not complete") }
        return document
    }

    func read(_ id: UUID, principal: Principal, offset: Int64, length: Int, grant: UUID? = nil) async throws -> (DocumentsRead.Reply, Data) {
        let (reply, attachments) = try await client.callWithAttachments(
            DocumentsRead.self, .init(id: id, offset: offset, length: length, shareGrant: grant), principal: principal)
        return (reply, attachments.first ?? Data())
    }

    func get(_ request: DocumentsGet.Request, as owner: UUID) async throws -> Document {
        try await client.call(DocumentsGet.self, request, principal: Self.user(owner))
    }
}

/// Where a run's new uploads go: the suites that move bytes run against both.
enum Storage: String, CaseIterable, Sendable, CustomTestStringConvertible {
    case postgres
    case s3
    var testDescription: String { rawValue }
}

/// A minimal PDF: header and `%%EOF` trailer.
enum Samples {
    static let pdf = Data("%PDF-1.7\n1 0 obj <<>> endobj\ntrailer <<>>\n%%EOF\n".utf8)
    static let png = Data([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 0, 0, 0, 13, 0x49, 0x48, 0x44, 0x52, 1, 2, 3])
    static let jpeg = Data([0xFF, 0xD8, 0xFF, 0xE0, 0, 16, 0x4A, 0x46, 0x49, 0x46, 0, 1, 1, 0, 0, 1, 0, 1, 0, 0])
    static let mp4 = Data([0, 0, 0, 0x18] + Array("ftypmp42".utf8) + [0, 0, 0, 0] + Array("mp42isom".utf8) + [0, 0, 0, 8] + Array("free".utf8))

    /// One random mebibyte, made once: files are built from copies of it, so making test data costs
    /// a memory copy rather than a random-number loop on the cooperative threads (which tests of
    /// other targets share and time).
    static let block: [UInt8] = {
        var generator = SplitMix64(seed: 0xD0C5_0005)
        var bytes = [UInt8](repeating: 0, count: 1 << 20)
        bytes.withUnsafeMutableBytes { raw in
            for index in stride(from: 0, to: raw.count, by: 8) { raw.storeBytes(of: generator.next(), toByteOffset: index, as: UInt64.self) }
        }
        return bytes
    }()

    /// `count` reproducible bytes for `seed`: copies of ``block``, each 4 KiB page stamped with the
    /// seed and the page's number, so different seeds and different places never hold the same bytes.
    static func bytes(_ count: Int, seed: UInt64) -> Data {
        var data = Data(count: count)
        data.withUnsafeMutableBytes { raw in
            guard let base = raw.baseAddress else { return }
            var offset = 0
            while offset < count {
                let length = min(block.count, count - offset)
                block.withUnsafeBytes { source in base.advanced(by: offset).copyMemory(from: source.baseAddress!, byteCount: length) }
                offset += length
            }
            for page in stride(from: 0, to: count - 15, by: 4096) {
                raw.storeBytes(of: seed, toByteOffset: page, as: UInt64.self)
                raw.storeBytes(of: UInt64(page), toByteOffset: page + 8, as: UInt64.self)
            }
        }
        return data
    }

    static func sha256(_ data: Data) -> String {
        Crypto.SHA256.hash(data: data).map { String(format: "%02x", $0) }.joined()
    }
}
