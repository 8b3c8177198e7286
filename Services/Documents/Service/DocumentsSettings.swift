import Foundation
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
        maxFileSize = Int64(maxFile)
        userQuota = Int64(quota)
    }
}
