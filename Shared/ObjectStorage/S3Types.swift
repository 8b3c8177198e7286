import CivilCalendar
import Foundation

/// What a HEAD of an object tells.
public struct S3ObjectHead: Sendable, Equatable {
    public let size: Int64
    /// As S3 sends it, quotes included (`"9b2cf5…"`; a multipart object's ends in `-N`).
    public let etag: String
    public let contentType: String?
    public let lastModified: Date?
}

/// One object of a listing.
public struct S3ObjectSummary: Sendable, Equatable {
    public let key: String
    public let size: Int64
    public let etag: String
    public let lastModified: Date?
}

/// One page of ListObjectsV2: pass `nextContinuationToken` back for the next, nil on the last page.
public struct S3ListPage: Sendable, Equatable {
    public let objects: [S3ObjectSummary]
    public let nextContinuationToken: String?
}

/// A key a multi-object delete could not remove, with S3's reason.
public struct S3DeleteFailure: Sendable, Equatable {
    public let key: String
    public let code: String
    public let message: String
}

/// A part to name in CompleteMultipartUpload: its number (1…10000) and the ETag UploadPart returned.
public struct S3CompletedPart: Sendable, Equatable {
    public let partNumber: Int
    public let etag: String
    public init(partNumber: Int, etag: String) {
        self.partNumber = partNumber
        self.etag = etag
    }
}

/// A part already stored in an unfinished multipart upload (ListParts), for resuming.
public struct S3PartInfo: Sendable, Equatable {
    public let partNumber: Int
    public let etag: String
    public let size: Int64
}

/// An unfinished multipart upload (ListMultipartUploads).
public struct S3MultipartUpload: Sendable, Equatable {
    public let key: String
    public let uploadId: String
    public let initiated: Date?
}

/// The dates S3 sends: ISO 8601 in XML (`2026-11-27T12:15:04.000Z`) and IMF-fixdate in headers
/// (`Fri, 27 Nov 2026 12:15:04 GMT`, read by ``HTTPDate``). Parsed with ``CivilCalendar``:
/// `DateFormatter` is not Sendable.
enum S3Dates {
    static func iso8601(_ text: String) -> Date? {
        let digits = text.split(whereSeparator: { !$0.isNumber }).compactMap { Int64($0) }
        guard digits.count >= 6, (1...12).contains(digits[1]), (1...31).contains(digits[2]) else { return nil }
        let days = CivilCalendar.days(year: digits[0], month: digits[1], day: digits[2])
        return Date(timeIntervalSince1970: TimeInterval(days * 86400 + digits[3] * 3600 + digits[4] * 60 + digits[5]))
    }

    static func httpDate(_ text: String) -> Date? {
        HTTPDate.parse(text).map { Date(timeIntervalSince1970: TimeInterval($0)) }
    }
}
