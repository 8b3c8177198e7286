import Foundation

/// What a document is for (seed 002 `DocumentType`).
public enum DocumentType: String, Codable, Sendable, CaseIterable {
    case highlightVideo = "highlight_video"
    case transcript
    case resume
    case recLetter = "rec_letter"
    case questionnaire
    case statsSheet = "stats_sheet"
}

/// Where a document's bytes stand.
public enum BytesState: String, Codable, Sendable {
    /// Created; bytes arrive through `documents.append` until `committedBytes == length`.
    case uploading
    /// Every byte is stored and checked; `sha256` is set.
    case available
    /// The metadata is here but the stored bytes are not (seed 002 "File no longer available").
    case missing
}

/// A document as every reply carries it: seed 002's model, the owner and the state of the bytes,
/// and the derived flags computed exactly as the seed's `Document` does.
public struct Document: Codable, Sendable, Equatable {
    public var id: UUID
    public var ownerId: UUID
    public var type: DocumentType
    public var title: String
    public var description: String?
    /// Always contains `/` and never parses as a bare id, so a reference is unambiguous.
    public var fileUrl: String
    public var fileType: String?
    public var version: Int
    public var schoolId: String?
    public var createdAt: Date
    /// Declared length in bytes (the upload is complete when `committedBytes` reaches it).
    public var length: Int64
    public var committedBytes: Int64
    /// Lowercase hex SHA-256 of the bytes, once complete: also the ETag of reads.
    public var sha256: String?
    public var bytesState: BytesState
    /// Claims PDF but has no `%%EOF` trailer (cut off or corrupt): "File may be corrupt".
    public var possiblyCorrupt: Bool
    public var isVideo: Bool
    public var isImage: Bool
    public var isPDF: Bool
    public var canPreview: Bool
    /// The file's name as the uploader gave it (control characters removed); downloads carry it
    /// in `Content-Disposition`. Nil when none was given.
    public var fileName: String?

    public init(
        id: UUID, ownerId: UUID, type: DocumentType, title: String, description: String?, fileUrl: String, fileType: String?,
        version: Int, schoolId: String?, createdAt: Date, length: Int64, committedBytes: Int64, sha256: String?,
        bytesState: BytesState, possiblyCorrupt: Bool, fileName: String? = nil
    ) {
        self.id = id
        self.ownerId = ownerId
        self.type = type
        self.title = title
        self.description = description
        self.fileUrl = fileUrl
        self.fileType = fileType
        self.version = version
        self.schoolId = schoolId
        self.createdAt = createdAt
        self.length = length
        self.committedBytes = committedBytes
        self.sha256 = sha256
        self.bytesState = bytesState
        self.possiblyCorrupt = possiblyCorrupt
        self.fileName = fileName
        let flags = Self.flags(type: type, fileType: fileType)
        (isVideo, isImage, isPDF, canPreview) = (flags.isVideo, flags.isImage, flags.isPDF, flags.canPreview)
    }

    /// Seed 002's computed properties, verbatim.
    public static func flags(type: DocumentType, fileType: String?) -> (isVideo: Bool, isImage: Bool, isPDF: Bool, canPreview: Bool) {
        let isVideo = type == .highlightVideo || fileType?.contains("video") == true
        let isImage = fileType?.contains("image") == true
        let isPDF = fileType == "application/pdf"
        return (isVideo, isImage, isPDF, isVideo || isImage || isPDF)
    }
}
