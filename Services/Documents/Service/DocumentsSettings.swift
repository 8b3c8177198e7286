import Foundation
import ObjectStorage
import ServiceKit

/// The Documents service's own settings (sizes in bytes). Every variable is read before any is
/// judged, so `--help-env` lists them all.
public struct DocumentsSettings: EnvironmentSettings {
    /// Largest document accepted (`payload_too_large` beyond it).
    public let maxFileSize: Int64
    /// Bytes one user may hold, counted by declared length (uploads in progress included).
    public let userQuota: Int64
    /// Largest chunk one `documents.append` may carry and one `documents.read` may return. Bounds
    /// the memory a transfer takes and stays far under the bus's 64 MiB message limit.
    public let chunkSize: Int
    /// Chunk transfers (appends and reads) running at once; beyond it they are refused
    /// `unavailable`. With the chunk size, this bounds the memory chunks take.
    public let maxTransfers: Int
    /// How long an unfinished upload may go without a chunk before it is deleted.
    public let uploadExpiry: Duration
    /// How often abandoned uploads are looked for.
    public let uploadSweepInterval: Duration
    /// Large objects of deleted accounts unlinked per transaction: each unlink takes a lock-table
    /// slot until commit, so this bounds what the sweeper holds.
    public let largeObjectUnlinkBatch: Int
    /// Longest life a share link may be given.
    public let shareMaxLifetime: Duration
    /// How long one `documents.share_open` lets its grant read the document.
    public let shareGrantLifetime: Duration
    /// Where new uploads' bytes go; existing rows keep theirs (see ``StorageKind``).
    public let storage: StorageKind
    /// The bucket, when `storage` is `s3` or an endpoint is given (rows already in S3 stay readable
    /// after switching new uploads back to PostgreSQL). Checked (`checkBucket`) before serving.
    public let s3: S3Configuration?
    /// Bytes of one S3 multipart part (all but the last; S3's minimum is 5 MiB): what an upload
    /// stages in PostgreSQL before sending it.
    public let s3PartSize: Int
    /// An object no row points to is deleted once it is older than this (an upload completed in
    /// S3 whose row then went, a copy a storage migration did not switch to).
    public let s3OrphanGrace: Duration
    /// How often the bucket is listed for such objects.
    public let s3OrphanSweepInterval: Duration

    public init(environment env: EnvironmentReader) throws {
        let maxFile = try env.int(
            "DOCUMENTS_MAX_FILE_SIZE", default: 4 << 30, in: 1...(1 << 50), "Largest document accepted, in bytes (4 GiB).")
        let quota = try env.int(
            "DOCUMENTS_USER_QUOTA", default: 10 << 30, in: 1...(1 << 55), "Bytes one user may store, in-progress uploads included (10 GiB).")
        chunkSize = try env.int(
            "DOCUMENTS_CHUNK_SIZE", default: 1 << 20, in: 4096...(16 << 20),
            "Largest chunk of one append or one read, in bytes (1 MiB; at most 16 MiB, under the bus's 64 MiB message limit).")
        maxTransfers = try env.int(
            "DOCUMENTS_MAX_TRANSFERS", default: 32, in: 1...4096,
            "Chunk appends and reads running at once; more are refused unavailable (bounds the memory chunks take).")
        uploadExpiry = try env.duration(
            "DOCUMENTS_UPLOAD_EXPIRY", default: .seconds(24 * 3600),
            "How long an unfinished upload may go without a chunk before it is deleted (its quota freed).")
        uploadSweepInterval = try env.duration(
            "DOCUMENTS_UPLOAD_SWEEP_INTERVAL", default: .seconds(600), "How often abandoned uploads are looked for.")
        largeObjectUnlinkBatch = try env.int(
            "DOCUMENTS_LARGE_OBJECT_UNLINK_BATCH", default: 200, in: 1...2000,
            "Large objects of a deleted account unlinked per transaction (each holds a lock-table slot until commit).")
        shareMaxLifetime = try env.duration(
            "DOCUMENTS_SHARE_MAX_LIFETIME", default: .seconds(30 * 24 * 3600), "Longest life a share link may be given (30 days).")
        shareGrantLifetime = try env.duration(
            "DOCUMENTS_SHARE_GRANT_LIFETIME", default: .seconds(3600),
            "How long a share-link use stays active after its last request: the same client's Range requests within it continue the use (one playback or download is one use), and its grant reads the document."
        )
        storage = try env.choice(
            "DOCUMENTS_STORAGE", default: StorageKind.postgres,
            "Where new uploads' bytes go: postgres (large objects) or s3 (DOCUMENTS_S3_*). Existing documents keep theirs.")
        let endpoint = env.string("DOCUMENTS_S3_ENDPOINT", default: "", "S3 endpoint, http(s)://host[:port] (required with DOCUMENTS_STORAGE=s3).")
        let region = env.string("DOCUMENTS_S3_REGION", default: "us-east-1", "S3 region the requests are signed for.")
        let bucket = env.string("DOCUMENTS_S3_BUCKET", default: "", "S3 bucket holding the documents' bytes (required with DOCUMENTS_STORAGE=s3).")
        let keyID = env.string("DOCUMENTS_S3_ACCESS_KEY_ID", default: "", "S3 access key id.")
        let secret = env.secret("DOCUMENTS_S3_SECRET_ACCESS_KEY", default: "", "S3 secret access key.")
        let pathStyle = try env.bool(
            "DOCUMENTS_S3_PATH_STYLE", default: true, "Address the bucket as endpoint/bucket (SeaweedFS, MinIO); false: bucket.endpoint (AWS).")
        s3PartSize = try env.int(
            "DOCUMENTS_S3_PART_SIZE", default: 8 << 20, in: (5 << 20)...(512 << 20),
            "Bytes of one S3 multipart part (5 MiB to 512 MiB): an upload stages this much in PostgreSQL before sending it.")
        s3OrphanGrace = try env.duration(
            "DOCUMENTS_S3_ORPHAN_GRACE", default: .seconds(24 * 3600),
            "An object in the bucket that no document points to is deleted once older than this.")
        s3OrphanSweepInterval = try env.duration(
            "DOCUMENTS_S3_ORPHAN_SWEEP_INTERVAL", default: .seconds(3600), "How often the bucket is listed for objects no document points to.")
        maxFileSize = Int64(maxFile)
        userQuota = Int64(quota)
        guard storage == .s3 || !endpoint.isEmpty else {
            s3 = nil
            return
        }
        let required = [
            ("DOCUMENTS_S3_ENDPOINT", endpoint), ("DOCUMENTS_S3_BUCKET", bucket), ("DOCUMENTS_S3_ACCESS_KEY_ID", keyID),
            ("DOCUMENTS_S3_SECRET_ACCESS_KEY", secret.revealed),
        ]
        if let (name, _) = required.first(where: { $0.1.isEmpty }) {
            throw ConfigurationError.missing(name, expected: "a value: the S3 store needs endpoint, bucket and both keys")
        }
        guard let url = URL(string: endpoint) else {
            throw ConfigurationError(variable: "DOCUMENTS_S3_ENDPOINT", value: endpoint, expected: "an http(s)://host[:port] address")
        }
        let configuration = S3Configuration(
            endpoint: url, region: region, bucket: bucket, accessKeyID: keyID, secretAccessKey: secret.revealed, pathStyle: pathStyle)
        do { try configuration.validate() } catch {
            // The validation's own words name the setting (endpoint, region or bucket) and never the secret.
            throw ConfigurationError(variable: "DOCUMENTS_S3_*", value: nil, expected: "a valid S3 configuration (\(error))")
        }
        // S3 allows 10,000 parts: the largest file must fit.
        guard maxFileSize <= Int64(s3PartSize) * 10_000 else {
            throw ConfigurationError(
                variable: "DOCUMENTS_S3_PART_SIZE", value: "\(s3PartSize)",
                expected: "at least DOCUMENTS_MAX_FILE_SIZE / 10000 (S3's most parts per upload)")
        }
        s3 = configuration
    }
}
