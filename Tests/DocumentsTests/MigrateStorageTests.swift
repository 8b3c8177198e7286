import Bus
import Contracts
import Foundation
import ObjectStorage
import TestSupport
import Testing

/// `compass documents migrate-storage` against the real Documents executable, PostgreSQL and
/// SeaweedFS: both directions, a dry run and a limit, reads served while rows move, and a run
/// killed mid-copy that leaves its row on the old store for a second run to finish.
@Suite(.serialized) struct MigrateStorageTests {
    /// Documents serving uploads on `storage`, with a bucket of this run's own configured so rows
    /// on either store read; `body` gets a client of that bucket.
    static func withDocuments(storage: Storage, _ body: (DocumentsHarness, S3Client) async throws -> Void) async throws {
        let server = try await SharedSeaweedFS.get()
        let bucket = "migrate-" + UUID().uuidString.lowercased().prefix(18)
        try await server.makeBucket(bucket)
        var settings = DocumentsHarness.s3Environment(server, bucket: bucket)
        settings["DOCUMENTS_STORAGE"] = storage.rawValue
        let client = try server.client(bucket: bucket)
        try await DocumentsHarness.run(settings: settings) { harness in try await body(harness, client) }
    }

    static func keys(_ client: S3Client) async throws -> [String] {
        try await client.listObjects(prefix: "documents/").objects.map(\.key)
    }

    static func migrate(_ harness: DocumentsHarness, _ arguments: String...) async throws -> ChildProcess.Result {
        let result = try await ChildProcess.run(
            ChildProcess.product("compass"), ["documents", "migrate-storage"] + arguments, environment: harness.environment)
        #expect(result.status == 0, "\(result.output)\(result.errors)")
        return result
    }

    static func storages(_ harness: DocumentsHarness) async throws -> [String: Int] {
        try await harness.database.pool.withConnection { db in
            var counts: [String: Int] = [:]
            for row in try db.query("SELECT storage, count(*)::bigint FROM documents.documents GROUP BY storage") {
                let (storage, count) = try row.decode(String.self, Int.self)
                counts[storage] = count
            }
            return counts
        }
    }

    /// The whole document read back through Documents, in 1 MiB ranges.
    static func readAll(_ harness: DocumentsHarness, _ document: Document, owner: UUID) async throws -> Data {
        var bytes = Data()
        while bytes.count < Int(document.length) {
            let (_, chunk) = try await harness.read(
                document.id, principal: DocumentsHarness.user(owner), offset: Int64(bytes.count), length: 1 << 20)
            guard !chunk.isEmpty else { break }
            bytes += chunk
        }
        return bytes
    }

    @Test func movesEveryDocumentToS3AndBackWhileReadsGoOn() async throws {
        try await Self.withDocuments(storage: .postgres) { harness, bucket in
            let owner = UUID()
            let pdf = Samples.pdf
            let video = Samples.mp4 + Samples.bytes(12 << 20, seed: 31)  // three 5 MiB parts
            let small = try await harness.store(owner: owner, pdf)
            let big = try await harness.store(
                owner: owner, video, type: .highlightVideo, title: "Highlights", fileType: "video/mp4")
            #expect(try await Self.storages(harness) == ["postgres": 2])

            let dry = try await Self.migrate(harness, "--to", "s3", "--dry-run")
            #expect(dry.output.contains("2 complete"), "\(dry.output)")
            #expect(try await Self.storages(harness) == ["postgres": 2])
            #expect(try await Self.keys(bucket).isEmpty)

            // Reads of the big document go on while both rows move, one at a time (--limit 1 first).
            let reader = Task {
                var reads = 0
                while !Task.isCancelled {
                    let offset = Int64.random(in: 0..<Int64(video.count - 65_536))
                    let bytes: Data
                    do {
                        (_, bytes) = try await harness.read(big.id, principal: DocumentsHarness.user(owner), offset: offset, length: 65_536)
                    } catch  where Task.isCancelled {
                        break  // stopped mid-call by the cancel below, not a failed read
                    }
                    guard bytes == video.subdata(in: Int(offset)..<Int(offset) + 65_536) else { throw TestSupportError("read \(offset) differs") }
                    reads += 1
                }
                return reads
            }
            let first = try await Self.migrate(harness, "--to", "s3", "--limit", "1")
            #expect(first.output.contains("moved 1 documents"), "\(first.output)")
            #expect(try await Self.storages(harness) == ["postgres": 1, "s3": 1])
            let rest = try await Self.migrate(harness, "--to", "s3")
            #expect(rest.output.contains("moved 1 documents") && rest.output.contains("left on postgres: 0"), "\(rest.output)")
            try await Task.sleep(for: .milliseconds(300))
            reader.cancel()
            let reads = try await reader.value
            #expect(reads > 0)

            #expect(try await Self.storages(harness) == ["s3": 2])
            let keys = try await Self.keys(bucket)
            #expect(Set(keys) == Set([small, big].map { "documents/\(owner.uuidString.lowercased())/\($0.id.uuidString.lowercased())" }))
            #expect(try await Self.readAll(harness, big, owner: owner) == video)
            #expect(try await Self.readAll(harness, small, owner: owner) == pdf)
            // The large objects are queued for Documents' unlinking (or already unlinked), not left behind.
            let leftLargeObjects = try await harness.database.pool.withConnection { db in
                try db.query(
                    """
                    SELECT count(*)::bigint FROM pg_largeobject_metadata m
                    WHERE NOT EXISTS (SELECT 1 FROM documents.large_object_removals r WHERE r.lo_oid = m.oid::bigint)
                    """)[0].decode(Int.self, column: 0)
            }
            #expect(leftLargeObjects == 0)

            // And back: the objects are queued for removal the way Documents' deletions queue them.
            let back = try await Self.migrate(harness, "--to", "postgres")
            #expect(back.output.contains("moved 2 documents"), "\(back.output)")
            #expect(try await Self.storages(harness) == ["postgres": 2])
            #expect(try await Self.readAll(harness, big, owner: owner) == video)
            let queued = try await harness.queuedObjectRemovals()
            let remaining = try await Self.keys(bucket).count
            #expect(queued >= remaining, "objects neither queued nor removed: \(remaining) left, \(queued) queued")
            let again = try await Self.migrate(harness, "--to", "postgres")
            #expect(again.output.contains("moved 0 documents"), "\(again.output)")
        }
    }

    @Test func aRunKilledMidCopyLeavesItsRowWhereItWasAndTheNextRunFinishes() async throws {
        try await Self.withDocuments(storage: .postgres) { harness, bucket in
            let owner = UUID()
            let video = Samples.mp4 + Samples.bytes(60 << 20, seed: 47)
            let document = try await harness.store(
                owner: owner, video, type: .highlightVideo, title: "Highlights", fileType: "video/mp4")
            let key = "documents/\(owner.uuidString.lowercased())/\(document.id.uuidString.lowercased())"

            // Killed (SIGKILL) as soon as its multipart upload is open: mid-copy.
            let process = Process()
            process.executableURL = URL(fileURLWithPath: ChildProcess.product("compass"))
            process.arguments = ["documents", "migrate-storage", "--to", "s3"]
            process.environment = harness.environment
            process.standardOutput = FileHandle.nullDevice
            process.standardError = FileHandle.nullDevice
            try process.run()
            let deadline = ContinuousClock.now + .seconds(60)
            while try await bucket.listMultipartUploads(prefix: key).isEmpty, process.isRunning, ContinuousClock.now < deadline {
                try await Task.sleep(for: .milliseconds(10))
            }
            #expect(process.isRunning, "the copy ended before it could be interrupted")
            kill(process.processIdentifier, SIGKILL)
            await process.exited()

            #expect(try await Self.storages(harness) == ["postgres": 1])
            #expect(try await Self.readAll(harness, document, owner: owner) == video)

            let resumed = try await Self.migrate(harness, "--to", "s3")
            #expect(resumed.output.contains("moved 1 documents"), "\(resumed.output)")
            #expect(try await Self.storages(harness) == ["s3": 1])
            #expect(try await Self.readAll(harness, document, owner: owner) == video)
            // The killed run's open upload was aborted by the second, not left to the orphan sweep.
            #expect(try await bucket.listMultipartUploads(prefix: key).isEmpty)
        }
    }

    @Test func refusesAnUnknownStoreAndAMissingBucketSetting() async throws {
        try await Self.withDocuments(storage: .postgres) { harness, bucket in
            let unknown = try await ChildProcess.run(
                ChildProcess.product("compass"), ["documents", "migrate-storage", "--to", "azure"], environment: harness.environment)
            #expect(unknown.status != 0 && unknown.errors.contains("--to must be s3 or postgres"), "\(unknown.errors)")
            var environment = harness.environment
            environment["DOCUMENTS_S3_ENDPOINT"] = nil
            let noBucket = try await ChildProcess.run(
                ChildProcess.product("compass"), ["documents", "migrate-storage", "--to", "s3"], environment: environment)
            #expect(noBucket.status != 0 && noBucket.errors.contains("DOCUMENTS_S3_ENDPOINT"), "\(noBucket.errors)")
        }
    }
}
