import Crypto
import Foundation

extension S3Client {
    /// Proves at start that the endpoint answers, the credentials are right and the bucket exists
    /// (a ListObjectsV2 of one key: unlike HeadBucket its error has a body naming the cause).
    /// Throws `unreachable`, `badCredentials`, `accessDenied` or `noSuchBucket`.
    public func checkBucket() async throws {
        let response = try await send(
            "CheckBucket", method: "GET", key: nil, query: [.init("list-type", "2"), .init("max-keys", "1")])
        _ = try succeeded(response, "CheckBucket", nil)
    }

    /// Makes the bucket (tests, `compass up --s3`); one that is already ours is success.
    public func createBucket() async throws {
        var body: [UInt8] = []
        if configuration.region != "us-east-1" {
            body = Array(
                ("<CreateBucketConfiguration xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\"><LocationConstraint>"
                    + xmlEscape(configuration.region) + "</LocationConstraint></CreateBucketConfiguration>").utf8)
        }
        let response = try await send("CreateBucket", method: "PUT", key: nil, body: body)
        if response.status == 409, failure(response, "CreateBucket", nil).code == "BucketAlreadyOwnedByYou" { return }
        _ = try succeeded(response, "CreateBucket", nil)
    }

    /// Stores `bytes` (one object, whole, in memory: small objects only) and returns its ETag.
    @discardableResult
    public func putObject(key: String, bytes: [UInt8], contentType: String? = nil) async throws -> String {
        try checkKey(key, "PutObject")
        let headers = contentType.map { [SigV4Signer.Header("content-type", $0)] } ?? []
        let response = try succeeded(
            try await send("PutObject", method: "PUT", key: key, headers: headers, body: bytes), "PutObject", key)
        return response.header("etag") ?? ""
    }

    /// The object's bytes, or those of `range` (inclusive offsets; one past the end is cut short
    /// by S3 as HTTP does). A missing key throws an error whose `isNotFound` is true; a range that
    /// starts past the end throws `invalidRange`.
    public func getObject(key: String, range: ClosedRange<Int64>? = nil) async throws -> [UInt8] {
        try checkKey(key, "GetObject")
        let headers = range.map { [SigV4Signer.Header("range", "bytes=\($0.lowerBound)-\($0.upperBound)")] } ?? []
        let response = try succeeded(
            try await send("GetObject", method: "GET", key: key, headers: headers), "GetObject", key)
        if let range, response.status != 206 || response.body.count > range.count {
            // A store that ignored the range sent more than asked: never hand that on as the range.
            throw S3Error(
                operation: "GetObject", resource: resource(key), reason: .malformedResponse, status: response.status, code: nil,
                message: "asked for bytes \(range.lowerBound)-\(range.upperBound), got HTTP \(response.status) with \(response.body.count) bytes")
        }
        if let length = response.header("content-length").flatMap(Int.init), length != response.body.count {
            throw S3Error(
                operation: "GetObject", resource: resource(key), reason: .connectionLost, status: response.status, code: nil,
                message: "the reply ended after \(response.body.count) of \(length) bytes")
        }
        return response.body
    }

    /// Size, ETag, type and date of the object; nil when there is none.
    public func headObject(key: String) async throws -> S3ObjectHead? {
        try checkKey(key, "HeadObject")
        let response = try await send("HeadObject", method: "HEAD", key: key)
        if response.status == 404 { return nil }
        _ = try succeeded(response, "HeadObject", key)
        guard let size = response.header("content-length").flatMap(Int64.init) else {
            throw S3Error(
                operation: "HeadObject", resource: resource(key), reason: .malformedResponse, status: response.status, code: nil,
                message: "no Content-Length")
        }
        return S3ObjectHead(
            size: size, etag: response.header("etag") ?? "", contentType: response.header("content-type"),
            lastModified: response.header("last-modified").flatMap(S3Dates.httpDate))
    }

    /// Removes the object; one already gone is success (S3 answers 204 either way).
    public func deleteObject(key: String) async throws {
        try checkKey(key, "DeleteObject")
        let response = try await send("DeleteObject", method: "DELETE", key: key)
        if response.status == 404 { return }
        _ = try succeeded(response, "DeleteObject", key)
    }

    /// Removes up to 1000 keys in one request and returns those S3 could not remove, each with
    /// its reason (missing keys count as removed). More than 1000 keys is refused before sending.
    public func deleteObjects(keys: [String]) async throws -> [S3DeleteFailure] {
        if keys.isEmpty { return [] }
        guard keys.count <= 1000 else {
            throw S3Error(
                operation: "DeleteObjects", resource: resource(nil), reason: .rejected, status: nil, code: "TooManyKeys",
                message: "\(keys.count) keys; a multi-object delete takes at most 1000")
        }
        for key in keys { try checkKey(key, "DeleteObjects") }
        var document = "<Delete xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\"><Quiet>true</Quiet>"
        for key in keys { document += "<Object><Key>\(xmlEscape(key))</Key></Object>" }
        document += "</Delete>"
        let body = Array(document.utf8)
        // S3 requires an integrity header on this request; Content-MD5 is the one every store knows.
        let md5 = Data(Insecure.MD5.hash(data: body)).base64EncodedString()
        let response = try succeeded(
            try await send(
                "DeleteObjects", method: "POST", key: nil, query: [.init("delete")],
                headers: [.init("content-md5", md5), .init("content-type", "application/xml")], body: body),
            "DeleteObjects", nil)
        let root = try xml(response, "DeleteObjects", nil)
        if root.name == "Error" { throw failure(Response(status: 500, headers: response.headers, body: response.body), "DeleteObjects", nil) }
        return root.all("Error").map { S3DeleteFailure(key: $0["Key"] ?? "", code: $0["Code"] ?? "", message: $0["Message"] ?? "") }
    }

    /// One page of the keys under `prefix` (ListObjectsV2), at most `maxKeys` (S3 caps it at 1000).
    public func listObjects(prefix: String, continuationToken: String? = nil, maxKeys: Int = 1000) async throws -> S3ListPage {
        var query: [SigV4Signer.QueryItem] = [.init("list-type", "2"), .init("prefix", prefix), .init("max-keys", String(maxKeys))]
        if let continuationToken { query.append(.init("continuation-token", continuationToken)) }
        let response = try succeeded(try await send("ListObjectsV2", method: "GET", key: nil, query: query), "ListObjectsV2", nil)
        let root = try xml(response, "ListObjectsV2", nil)
        let objects = root.all("Contents").map {
            S3ObjectSummary(
                key: $0["Key"] ?? "", size: $0["Size"].flatMap(Int64.init) ?? 0, etag: $0["ETag"] ?? "",
                lastModified: $0["LastModified"].flatMap(S3Dates.iso8601))
        }
        let truncated = root["IsTruncated"] == "true"
        let next = root["NextContinuationToken"].flatMap { $0.isEmpty ? nil : $0 }
        if truncated && next == nil {
            throw S3Error(
                operation: "ListObjectsV2", resource: resource(nil), reason: .malformedResponse, status: response.status,
                code: nil, message: "a truncated listing without a NextContinuationToken")
        }
        return S3ListPage(objects: objects, nextContinuationToken: truncated ? next : nil)
    }

    /// A URL that GETs the object without credentials until `expires` seconds after `now`
    /// (at most 7 days, S3's limit), for a store clients can reach.
    public func presignedGetURL(key: String, expires: Int, now: Date = Date()) throws -> URL {
        try checkKey(key, "PresignGetObject")
        let (base, host, path) = address(key: key)
        let request = SigV4Signer.Request(method: "GET", path: path, headers: [.init("host", host)], payloadHash: "UNSIGNED-PAYLOAD")
        let (query, _) = signer.presign(request, at: now, expires: min(max(expires, 1), 604_800))
        guard let url = URL(string: base + path + "?" + SigV4Signer.canonicalQuery(query)) else {
            throw S3Error(
                operation: "PresignGetObject", resource: resource(key), reason: .rejected, status: nil, code: "InvalidURL",
                message: "could not form a URL")
        }
        return url
    }
}
