import Foundation
import ObjectStorage
import TestSupport
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The client against a real SeaweedFS (one server for the suite; each test under its own prefix).
@Suite("S3 client against SeaweedFS")
struct S3ClientTests {
    static func prefix() -> String { "t\(UInt32.random(in: 0...UInt32.max))/" }
    /// Bytes that differ at every offset that matters (so a shifted range cannot pass).
    static func bytes(_ count: Int, seed: Int = 0) -> [UInt8] { (0..<count).map { UInt8(truncatingIfNeeded: ($0 &+ seed) &* 31 &+ $0 >> 8) } }

    @Test func putGetRangeHeadDelete() async throws {
        let client = try await SharedSeaweedFS.get().client()
        let key = Self.prefix() + "dir/a b+ü.mp4"
        let body = Self.bytes(1000)
        let etag = try await client.putObject(key: key, bytes: body, contentType: "video/mp4")
        #expect(etag.hasPrefix("\""))

        let head = try #require(try await client.headObject(key: key))
        #expect(head.size == 1000)
        #expect(head.etag == etag)
        #expect(head.contentType == "video/mp4")
        #expect(abs((head.lastModified ?? .distantPast).timeIntervalSinceNow) < 300)

        #expect(try await client.getObject(key: key) == body)
        #expect(try await client.getObject(key: key, range: 10...19) == Array(body[10...19]))
        // A range past the end is cut at the end, as HTTP does.
        #expect(try await client.getObject(key: key, range: 990...5000) == Array(body[990...]))
        await #expect { try await client.getObject(key: key, range: 5000...5010) } throws: { error in
            (error as? S3Error)?.reason == .invalidRange && (error as? S3Error)?.status == 416
        }

        try await client.deleteObject(key: key)
        #expect(try await client.headObject(key: key) == nil)
        let missing = await #expect(throws: S3Error.self) { try await client.getObject(key: key) }
        #expect(missing?.isNotFound == true)
        #expect(missing?.status == 404)
        #expect(missing?.code == "NoSuchKey")
        #expect(missing?.operation == "GetObject")
        #expect(missing?.isRetryable == false)
        try await client.deleteObject(key: key)  // already gone: success
    }

    /// An empty object (a zero-byte document) stores, heads and reads back as empty.
    @Test func emptyObjectRoundTrips() async throws {
        let client = try await SharedSeaweedFS.get().client()
        let key = Self.prefix() + "empty"
        try await client.putObject(key: key, bytes: [], contentType: "text/plain")
        #expect(try await client.headObject(key: key)?.size == 0)
        #expect(try await client.getObject(key: key) == [])
        try await client.deleteObject(key: key)
    }

    @Test func listPagesAndMultiObjectDelete() async throws {
        let client = try await SharedSeaweedFS.get().client()
        let prefix = Self.prefix()
        let keys = (0..<7).map { "\(prefix)object-\($0)" }
        for (index, key) in keys.enumerated() { try await client.putObject(key: key, bytes: Self.bytes(index + 1)) }
        try await client.putObject(key: Self.prefix() + "elsewhere", bytes: [1])

        var pages: [[String]] = []
        var token: String?
        repeat {
            let page = try await client.listObjects(prefix: prefix, continuationToken: token, maxKeys: 3)
            pages.append(page.objects.map(\.key))
            #expect(page.objects.allSatisfy { $0.size == Int64(keys.firstIndex(of: $0.key)! + 1) && $0.lastModified != nil })
            token = page.nextContinuationToken
        } while token != nil && pages.count < 10
        #expect(pages.map(\.count) == [3, 3, 1])
        #expect(pages.flatMap { $0 } == keys)

        let failures = try await client.deleteObjects(keys: keys + ["\(prefix)never-was"])
        #expect(failures == [])
        #expect(try await client.listObjects(prefix: prefix).objects == [])
        await #expect { try await client.deleteObjects(keys: (0...1000).map { "k\($0)" }) } throws: { error in
            (error as? S3Error)?.code == "TooManyKeys"
        }
    }

    @Test func multipartUploadListPartsCompleteAndAbort() async throws {
        let client = try await SharedSeaweedFS.get().client()
        let prefix = Self.prefix()
        let key = prefix + "video.mp4"
        let parts = [Self.bytes(5 * 1024 * 1024, seed: 1), Self.bytes(5 * 1024 * 1024, seed: 2), Self.bytes(1234, seed: 3)]
        let uploadId = try await client.createMultipartUpload(key: key, contentType: "video/mp4")
        #expect(try await client.listMultipartUploads(prefix: prefix).map(\.uploadId) == [uploadId])

        var completed: [S3CompletedPart] = []
        for (index, part) in parts.enumerated() {
            let etag = try await client.uploadPart(key: key, uploadId: uploadId, partNumber: index + 1, bytes: part)
            completed.append(S3CompletedPart(partNumber: index + 1, etag: etag))
        }
        // What a resumed upload reads back: every part, its size and ETag.
        let listed = try await client.listParts(key: key, uploadId: uploadId)
        #expect(listed.map(\.partNumber) == [1, 2, 3])
        #expect(listed.map(\.size) == parts.map { Int64($0.count) })
        #expect(listed.map(\.etag) == completed.map(\.etag))

        try await client.completeMultipartUpload(key: key, uploadId: uploadId, parts: completed)
        let whole = parts.flatMap { $0 }
        #expect(try await client.headObject(key: key)?.size == Int64(whole.count))
        let boundary = Int64(parts[0].count)
        #expect(try await client.getObject(key: key, range: (boundary - 5)...(boundary + 5)) == Array(whole[Int(boundary - 5)...Int(boundary + 5)]))
        #expect(try await client.getObject(key: key) == whole)
        #expect(try await client.listMultipartUploads(prefix: prefix).isEmpty)

        let abandoned = try await client.createMultipartUpload(key: prefix + "abandoned")
        _ = try await client.uploadPart(key: prefix + "abandoned", uploadId: abandoned, partNumber: 1, bytes: parts[2])
        try await client.abortMultipartUpload(key: prefix + "abandoned", uploadId: abandoned)
        try await client.abortMultipartUpload(key: prefix + "abandoned", uploadId: abandoned)  // gone: success
        #expect(try await client.listMultipartUploads(prefix: prefix).isEmpty)
        #expect(try await client.headObject(key: prefix + "abandoned") == nil)
        try await client.deleteObject(key: key)
    }

    /// What S3 refuses at completion is an error naming it, not retryable; a vanished upload is `noSuchUpload`.
    @Test func multipartRefusalsAreNamed() async throws {
        let client = try await SharedSeaweedFS.get().client()
        let key = Self.prefix() + "refused"
        let uploadId = try await client.createMultipartUpload(key: key)
        let first = try await client.uploadPart(key: key, uploadId: uploadId, partNumber: 1, bytes: [1, 2, 3])
        let second = try await client.uploadPart(key: key, uploadId: uploadId, partNumber: 2, bytes: [4, 5, 6])

        let wrongTag = await #expect(throws: S3Error.self) {
            try await client.completeMultipartUpload(key: key, uploadId: uploadId, parts: [.init(partNumber: 1, etag: "\"bogus\"")])
        }
        #expect(wrongTag?.code == "InvalidPart")
        #expect(wrongTag?.reason == .rejected)
        #expect(wrongTag?.isRetryable == false)

        let tooSmall = await #expect(throws: S3Error.self) {
            try await client.completeMultipartUpload(
                key: key, uploadId: uploadId, parts: [.init(partNumber: 1, etag: first), .init(partNumber: 2, etag: second)])
        }
        #expect(tooSmall?.code == "EntityTooSmall")
        #expect(tooSmall?.operation == "CompleteMultipartUpload")

        try await client.abortMultipartUpload(key: key, uploadId: uploadId)
        let gone = await #expect(throws: S3Error.self) { try await client.listParts(key: key, uploadId: uploadId) }
        #expect(gone?.reason == .noSuchUpload)
        #expect(gone?.status == 404)
    }

    @Test func presignedGetNeedsNoCredentialsAndIsBoundToItsSignature() async throws {
        let client = try await SharedSeaweedFS.get().client()
        let key = Self.prefix() + "shared.bin"
        try await client.putObject(key: key, bytes: Self.bytes(64))
        let url = try client.presignedGetURL(key: key, expires: 300)
        let (data, response) = try await URLSession.shared.data(from: url)
        #expect((response as? HTTPURLResponse)?.statusCode == 200)
        #expect([UInt8](data) == Self.bytes(64))
        let tampered = URL(string: url.absoluteString.replacingOccurrences(of: "X-Amz-Expires=300", with: "X-Amz-Expires=301"))!
        let (_, refused) = try await URLSession.shared.data(from: tampered)
        #expect((refused as? HTTPURLResponse)?.statusCode == 403)
    }

    @Test func checkBucketNamesWhatIsWrong() async throws {
        let server = try await SharedSeaweedFS.get()
        try await server.client().checkBucket()

        let wrongSecret = try S3Client(configuration: server.configuration(secretAccessKey: "not-the-secret"), logger: testLogger())
        let signature = await #expect(throws: S3Error.self) { try await wrongSecret.checkBucket() }
        #expect(signature?.reason == .badCredentials)
        #expect(signature?.code == "SignatureDoesNotMatch")
        #expect(signature?.status == 403)
        #expect(signature?.isRetryable == false)

        var unknownKey = server.configuration()
        unknownKey.accessKeyID = "no-such-key"
        let key = await #expect(throws: S3Error.self) { try await S3Client(configuration: unknownKey, logger: testLogger()).checkBucket() }
        #expect(key?.reason == .badCredentials)
        #expect(key?.code == "InvalidAccessKeyId")

        let missing = await #expect(throws: S3Error.self) { try await server.client(bucket: "no-such-bucket").checkBucket() }
        #expect(missing?.reason == .noSuchBucket)
        #expect(missing?.code == "NoSuchBucket")
        #expect("\(missing!)".contains("CheckBucket no-such-bucket"))
    }
}
