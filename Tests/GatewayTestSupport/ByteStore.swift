import Foundation
import TestSupport

/// Where a gateway stack's Documents keeps new uploads: the suites that move bytes through the
/// gateway run against both, as the Documents suites do.
public enum ByteStore: String, CaseIterable, Sendable, CustomStringConvertible {
    case postgres
    case s3
    public var description: String { rawValue }

    /// S3 parts in the tests: S3's minimum, so files of a few MiB already take several parts.
    public static let partSize = 5 << 20

    /// The Documents variables that put new uploads in `bucket` of `server`.
    public static func s3Environment(_ server: SeaweedFS, bucket: String) -> [String: String] {
        [
            "DOCUMENTS_STORAGE": "s3", "DOCUMENTS_S3_ENDPOINT": server.endpoint.absoluteString, "DOCUMENTS_S3_REGION": "us-east-1",
            "DOCUMENTS_S3_BUCKET": bucket, "DOCUMENTS_S3_ACCESS_KEY_ID": server.accessKeyID,
            "DOCUMENTS_S3_SECRET_ACCESS_KEY": server.secretAccessKey, "DOCUMENTS_S3_PATH_STYLE": "true",
            "DOCUMENTS_S3_PART_SIZE": "\(partSize)",
        ]
    }
}
