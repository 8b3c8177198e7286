import Foundation

/// Where the bucket is and how to reach it. The secret never appears in `description`,
/// `debugDescription` or a `dump`: a configuration may be logged at start.
public struct S3Configuration: Sendable, CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// `http(s)://host[:port]`, no path: e.g. `https://s3.eu-west-1.amazonaws.com` or
    /// `http://127.0.0.1:8333` (SeaweedFS).
    public var endpoint: URL
    public var region: String
    public var bucket: String
    public var accessKeyID: String
    public var secretAccessKey: String
    /// `endpoint/bucket/key` when true (SeaweedFS, MinIO); `bucket.endpoint/key` when false (AWS's
    /// virtual-hosted style, which needs the bucket's name in DNS).
    public var pathStyle: Bool
    /// A request that makes no progress for this long fails with a retryable `timedOut`; a whole
    /// request (a part upload on a slow link) may last `requestTimeout × 10`.
    public var requestTimeout: TimeInterval

    public init(
        endpoint: URL, region: String, bucket: String, accessKeyID: String, secretAccessKey: String, pathStyle: Bool,
        requestTimeout: TimeInterval = 30
    ) {
        self.endpoint = endpoint
        self.region = region
        self.bucket = bucket
        self.accessKeyID = accessKeyID
        self.secretAccessKey = secretAccessKey
        self.pathStyle = pathStyle
        self.requestTimeout = requestTimeout
    }

    public var description: String {
        "S3Configuration(endpoint: \(endpoint.absoluteString), region: \(region), bucket: \(bucket), "
            + "accessKeyID: \(accessKeyID), secretAccessKey: <redacted>, pathStyle: \(pathStyle))"
    }
    public var debugDescription: String { description }
    public var customMirror: Mirror {
        Mirror(
            self,
            children: [
                "endpoint": endpoint, "region": region, "bucket": bucket, "accessKeyID": accessKeyID,
                "secretAccessKey": "<redacted>", "pathStyle": pathStyle,
            ], displayStyle: .struct)
    }

    /// Checks what a request needs before any is sent: a clear error at start, not at the first upload.
    public func validate() throws(S3ConfigurationError) {
        guard let scheme = endpoint.scheme?.lowercased(), scheme == "http" || scheme == "https", endpoint.host != nil else {
            throw .invalid("the endpoint \(endpoint.absoluteString) is not an http(s)://host[:port] address")
        }
        if endpoint.path.count > 1 { throw .invalid("the endpoint \(endpoint.absoluteString) has a path; give the host only") }
        if region.isEmpty { throw .invalid("the region is empty") }
        if accessKeyID.isEmpty || secretAccessKey.isEmpty { throw .invalid("the access key id or the secret access key is empty") }
        // S3's bucket naming rules, the part that matters for a URL: 3-63 of a-z 0-9 . -
        let allowed = Set("abcdefghijklmnopqrstuvwxyz0123456789.-")
        guard (3...63).contains(bucket.count), bucket.allSatisfy(allowed.contains), bucket.first != "-", bucket.first != "." else {
            throw .invalid("the bucket name '\(bucket)' is not a valid S3 bucket name (3-63 of a-z, 0-9, '.', '-')")
        }
    }
}

public enum S3ConfigurationError: Error, Sendable, CustomStringConvertible, Equatable {
    case invalid(String)
    public var description: String {
        switch self {
        case .invalid(let why): "invalid S3 configuration: \(why)"
        }
    }
}
