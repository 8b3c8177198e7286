import Bus
import Foundation
import Postgres

/// Where a deployment puts the bytes of NEW uploads (`DOCUMENTS_STORAGE`). Existing rows keep
/// theirs: reads and deletions follow each row's own ``ByteLocation``.
public enum StorageKind: String, Sendable, CaseIterable {
    /// PostgreSQL large objects: one process to run, one backup (the default).
    case postgres
    /// An S3-compatible bucket: the database then carries metadata only.
    case s3
}

/// Where one document's bytes are: its `storage` column with the large object or the object key.
enum ByteLocation: Sendable, Equatable {
    case largeObject(UInt32)
    case object(key: String)

    /// From a row's `storage`, `lo_oid` and `object_key`; nil when they do not agree.
    init?(storage: String, largeObject: Int64?, objectKey: String?) {
        switch StorageKind(rawValue: storage) {
        case .postgres:
            guard let oid = largeObject.flatMap({ UInt32(exactly: $0) }) else { return nil }
            self = .largeObject(oid)
        case .s3:
            guard let objectKey else { return nil }
            self = .object(key: objectKey)
        case nil: return nil
        }
    }

    var kind: StorageKind {
        switch self {
        case .largeObject: .postgres
        case .object: .s3
        }
    }

    /// The object key of a new document in a bucket: by owner, so one account's objects can be
    /// listed (and checked gone after its deletion) by prefix.
    static func objectKey(owner: UUID, id: UUID) -> String {
        "documents/\(owner.uuidString.lowercased())/\(id.uuidString.lowercased())"
    }
}

/// The byte operations the store needs from one place bytes are kept. Metadata stays in the
/// `documents` row either way; each implementation keeps its bytes consistent with it:
/// ``LargeObjectBytes`` in the row's own transaction, ``ObjectStoreBytes`` by staging in
/// PostgreSQL what is not yet in S3 (see the README).
protocol DocumentBytes: Sendable {
    /// Writes one chunk at the committed offset `offset` of upload `id` and commits it before
    /// returning; the chunk that reaches the declared length also finishes the upload (SHA-256,
    /// PDF trailer check) and makes the document `available`.
    func append(_ id: UUID, offset: Int64, chunk: Data, access: Access) async throws -> StoredDocument
    /// Up to `length` bytes from `offset` of a complete document (`offset` is before its end).
    /// Bytes gone from their place are `gone` ("File no longer available").
    func read(_ document: StoredDocument, offset: Int64, length: Int) async throws -> Data
    /// On the transaction that deletes the document's row: removes its bytes or queues their
    /// removal (never lost: the queue is a table).
    func remove(_ document: StoredDocument, on db: isolated PostgresConnection) throws
}

/// The rules every append checks under the row's lock, wherever the bytes go.
enum AppendRules {
    /// `conflict` unless the upload is unfinished and `offset` is its committed offset;
    /// `invalid_argument` past the declared length. Returns the chunk's end.
    static func check(_ document: StoredDocument, offset: Int64, count: Int) throws -> Int64 {
        guard document.state == .uploading else {
            throw BusError(.conflict, "the upload is already complete", details: ["offset": "\(document.committed)"])
        }
        guard offset == document.committed else {
            throw BusError(
                .conflict, "the chunk starts at \(offset) but \(document.committed) bytes are committed",
                details: ["offset": "\(document.committed)"])
        }
        let end = offset + Int64(count)
        guard end <= document.length else {
            throw BusError(.invalidArgument, "the chunk runs past the declared length \(document.length)", details: ["offset": "\(offset)"])
        }
        return end
    }

    /// `unsupported_media_type` when this chunk completes the head and the head is not the
    /// declared type; `head` gives the first bytes (asked only then).
    static func checkType(
        _ document: StoredDocument, offset: Int64, end: Int64, head: () throws -> [UInt8]
    ) throws {
        let headEnd = min(Int64(MagicNumbers.headerLength), document.length)
        guard offset < headEnd, end >= headEnd else { return }
        if case .mismatch(let expected) = MagicNumbers.check(fileType: document.fileType, head: Array(try head().prefix(Int(headEnd)))) {
            throw BusError(.unsupportedMediaType, "declared \(document.fileType ?? "-") but the bytes are not \(expected)")
        }
    }
}

extension AppendRules {
    /// The row's bytes moved to the other storage (a storage migration) between look-up and lock.
    static func moved(_ id: UUID) -> BusError {
        BusError(.unavailable, "the bytes of document \(id.uuidString.lowercased()) are being moved; try again")
    }
}
