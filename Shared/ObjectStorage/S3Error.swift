import Foundation

/// A failed S3 call: which operation on which resource, what came back (HTTP status, S3's error
/// `Code` and message, request id) or what failed before a response (no connection, timeout), and
/// whether trying again may succeed. Like an errno beside the system call that returned it.
public struct S3Error: Error, Sendable, CustomStringConvertible {
    public enum Reason: String, Sendable, Equatable {
        /// No connection could be made: refused, unknown host, no route.
        case unreachable
        /// The connection broke mid-request (reset, closed early).
        case connectionLost
        /// No progress within the configured timeout.
        case timedOut
        /// `InvalidAccessKeyId`, `SignatureDoesNotMatch`, or another 403 on an authentication check.
        case badCredentials
        /// The 403 of a valid identity that may not do this.
        case accessDenied
        case noSuchBucket
        /// `NoSuchKey`, or a 404 with no body (a HEAD).
        case notFound
        case noSuchUpload
        /// `InvalidRange` (416): the range starts past the end.
        case invalidRange
        /// 5xx, `SlowDown`, `InternalError`, also a 200 whose body is an error (CompleteMultipartUpload).
        case serviceError
        /// Another 4xx: the request itself is wrong (e.g. `EntityTooSmall`, `InvalidPart`).
        case rejected
        /// A response we could not read.
        case malformedResponse
    }

    /// The S3 operation, e.g. `PutObject`, `CompleteMultipartUpload`.
    public let operation: String
    /// `bucket` or `bucket/key`.
    public let resource: String
    public let reason: Reason
    /// The HTTP status, nil when no response came.
    public let status: Int?
    /// S3's error `Code` (`NoSuchKey`, `SignatureDoesNotMatch`, …), or the transport's error name.
    public let code: String?
    public let message: String
    public let requestID: String?

    public init(
        operation: String, resource: String, reason: Reason, status: Int?, code: String?, message: String, requestID: String? = nil
    ) {
        self.operation = operation
        self.resource = resource
        self.reason = reason
        self.status = status
        self.code = code
        self.message = message
        self.requestID = requestID
    }

    /// Whether the same request may succeed later: the store was unreachable, the connection broke,
    /// it timed out, or the store answered 5xx/`SlowDown`. Everything else is an answer that
    /// repeating will not change.
    public var isRetryable: Bool {
        switch reason {
        case .unreachable, .connectionLost, .timedOut, .serviceError: true
        case .badCredentials, .accessDenied, .noSuchBucket, .notFound, .noSuchUpload, .invalidRange, .rejected,
            .malformedResponse:
            false
        }
    }

    /// The key (or upload) does not exist.
    public var isNotFound: Bool { reason == .notFound }

    public var description: String {
        var text = "S3 \(operation) \(resource) failed: \(reason.rawValue)"
        if let status { text += ", HTTP \(status)" }
        if let code { text += " \(code)" }
        if !message.isEmpty { text += ": \(message)" }
        if let requestID { text += " (request id \(requestID))" }
        return text + (isRetryable ? " [retryable]" : "")
    }

    /// The reason an S3 error body's `Code` (or the bare status) stands for.
    static func reason(status: Int, code: String?) -> Reason {
        switch code {
        case "InvalidAccessKeyId", "SignatureDoesNotMatch", "AuthorizationHeaderMalformed", "InvalidToken",
            "ExpiredToken", "RequestTimeTooSkewed", "MissingSecurityHeader":
            return .badCredentials
        case "AccessDenied", "AllAccessDisabled": return .accessDenied
        case "NoSuchBucket": return .noSuchBucket
        case "NoSuchKey": return .notFound
        case "NoSuchUpload": return .noSuchUpload
        case "InvalidRange": return .invalidRange
        case "SlowDown", "InternalError", "ServiceUnavailable", "RequestTimeout": return .serviceError
        default: break
        }
        switch status {
        case 403: return .accessDenied
        case 404: return .notFound
        case 416: return .invalidRange
        case 408, 429, 500...599: return .serviceError
        default: return .rejected
        }
    }
}
