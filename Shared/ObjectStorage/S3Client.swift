import Foundation
import Logging

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The S3 calls Documents makes, signed with SigV4 and sent with Foundation's `URLSession`
/// (libcurl on Linux: TLS, keep-alive; no SwiftNIO in the services). Every call is async and
/// waits on URLSession's own thread, never blocking the cooperative pool. Every failure is an
/// `S3Error` that keeps the operation, the HTTP status, S3's `Code` and message, and says whether
/// a retry may succeed. Bodies are one object or one part in memory, never a whole file.
public final class S3Client: Sendable {
    public let configuration: S3Configuration
    let signer: SigV4Signer
    let session: URLSession
    let logger: Logger

    public init(configuration: S3Configuration, logger: Logger) throws(S3ConfigurationError) {
        try configuration.validate()
        self.configuration = configuration
        self.signer = SigV4Signer(
            accessKeyID: configuration.accessKeyID, secretAccessKey: configuration.secretAccessKey, region: configuration.region)
        self.logger = logger
        let sessionConfiguration = URLSessionConfiguration.ephemeral
        sessionConfiguration.timeoutIntervalForRequest = configuration.requestTimeout
        sessionConfiguration.timeoutIntervalForResource = configuration.requestTimeout * 10
        // No cache, no cookies: every byte comes from the store, every request is signed alone.
        sessionConfiguration.urlCache = nil
        sessionConfiguration.requestCachePolicy = .reloadIgnoringLocalCacheData
        sessionConfiguration.httpCookieStorage = nil
        sessionConfiguration.httpShouldSetCookies = false
        self.session = URLSession(configuration: sessionConfiguration)
    }

    deinit { session.finishTasksAndInvalidate() }

    /// `bucket` or `bucket/key`, for errors and logs.
    func resource(_ key: String?) -> String { key.map { "\(configuration.bucket)/\($0)" } ?? configuration.bucket }

    /// The URL, the `Host` header's value and the wire path of `key` (the bucket itself when nil).
    func address(key: String?) -> (base: String, host: String, path: String) {
        let endpoint = configuration.endpoint
        let scheme = endpoint.scheme?.lowercased() ?? "https"
        var host = endpoint.host ?? ""
        if host.contains(":") { host = "[\(host)]" }  // IPv6 literal
        if !configuration.pathStyle { host = "\(configuration.bucket).\(host)" }
        if let port = endpoint.port, !(scheme == "http" && port == 80), !(scheme == "https" && port == 443) {
            host += ":\(port)"
        }
        let encodedKey = key.map { SigV4Signer.uriEncode($0, keepSlash: true) }
        let path: String
        if configuration.pathStyle {
            path = "/\(configuration.bucket)" + (encodedKey.map { "/\($0)" } ?? "")
        } else {
            path = "/" + (encodedKey ?? "")
        }
        return ("\(scheme)://\(host)", host, path)
    }

    /// An S3 key we can address unambiguously: 1-1024 bytes, and no `.`/`..` segment (an HTTP
    /// client would resolve it and sign another path than it sends).
    func checkKey(_ key: String, _ operation: String) throws(S3Error) {
        let segments = key.split(separator: "/", omittingEmptySubsequences: false)
        guard !key.isEmpty, key.utf8.count <= 1024, !segments.contains(where: { $0 == "." || $0 == ".." }) else {
            throw S3Error(
                operation: operation, resource: resource(key), reason: .rejected, status: nil, code: "InvalidKey",
                message: "an object key must be 1-1024 bytes with no '.' or '..' segment")
        }
    }

    struct Response: Sendable {
        let status: Int
        let headers: [String: String]
        let body: [UInt8]
        func header(_ name: String) -> String? { headers[name.lowercased()] }
    }

    /// Signs and sends one request, again (newly signed) after a pause when the server answers
    /// 500, 502, 503 or 504, at most ``serverErrorAttempts`` times in all, as AWS's SDKs do: a
    /// store answers those while it is busy or still starting (SeaweedFS gives `InternalError`
    /// until a volume can take the write), and every call made here is safe to repeat (a PUT of an
    /// object or part replaces it; a repeated completion finds no upload, which the caller handles).
    /// Throws only when no HTTP response came (as an `S3Error` naming why) or the task was
    /// cancelled; any other status, or the last 5xx, is returned for the caller to judge.
    func send(
        _ operation: String, method: String, key: String?, query: [SigV4Signer.QueryItem] = [],
        headers extra: [SigV4Signer.Header] = [], body: [UInt8] = []
    ) async throws -> Response {
        var attempt = 1
        while true {
            let response = try await sendOnce(operation, method: method, key: key, query: query, headers: extra, body: body)
            guard [500, 502, 503, 504].contains(response.status), attempt < Self.serverErrorAttempts else { return response }
            logger.debug("s3 \(operation) \(resource(key)): HTTP \(response.status), trying again", metadata: ["attempt": "\(attempt)"])
            try await Task.sleep(for: .milliseconds(100 << (2 * (attempt - 1))))
            attempt += 1
        }
    }

    /// How many times a request answered with a server error is sent in all (pauses 100 and 400 ms).
    static let serverErrorAttempts = 3

    private func sendOnce(
        _ operation: String, method: String, key: String?, query: [SigV4Signer.QueryItem],
        headers extra: [SigV4Signer.Header], body: [UInt8]
    ) async throws -> Response {
        let (base, host, path) = address(key: key)
        let payloadHash = body.isEmpty ? SigV4Signer.emptyPayloadHash : SigV4Signer.hexSHA256(body)
        let now = Date()
        var headers = [
            SigV4Signer.Header("host", host),
            SigV4Signer.Header("x-amz-content-sha256", payloadHash),
            SigV4Signer.Header("x-amz-date", SigV4Signer.amzDate(now)),
        ]
        headers += extra
        let signature = signer.sign(
            SigV4Signer.Request(method: method, path: path, query: query, headers: headers, payloadHash: payloadHash), at: now)
        let queryText = SigV4Signer.canonicalQuery(query)
        guard let url = URL(string: base + path + (queryText.isEmpty ? "" : "?" + queryText)) else {
            throw S3Error(
                operation: operation, resource: resource(key), reason: .rejected, status: nil, code: "InvalidURL",
                message: "could not form a URL from \(base)\(path)")
        }
        var request = URLRequest(url: url)
        request.httpMethod = method
        request.timeoutInterval = configuration.requestTimeout
        for header in headers where header.name != "host" { request.setValue(header.value, forHTTPHeaderField: header.name) }
        request.setValue(signature.authorization, forHTTPHeaderField: "Authorization")
        // Bytes as stored: a compressed reply would break ranges and lengths.
        request.setValue("identity", forHTTPHeaderField: "Accept-Encoding")
        if !body.isEmpty || method == "PUT" || method == "POST" {
            request.setValue(String(body.count), forHTTPHeaderField: "Content-Length")
        }
        let data: Data
        let urlResponse: URLResponse
        do {
            if body.isEmpty {
                (data, urlResponse) = try await session.data(for: request)
            } else {
                (data, urlResponse) = try await session.upload(for: request, from: Data(body))
            }
        } catch {
            if Task.isCancelled { throw CancellationError() }
            throw Self.transportError(error, operation: operation, resource: resource(key), endpoint: base)
        }
        guard let http = urlResponse as? HTTPURLResponse else {
            throw S3Error(
                operation: operation, resource: resource(key), reason: .malformedResponse, status: nil, code: nil,
                message: "the reply was not HTTP")
        }
        var responseHeaders: [String: String] = [:]
        for (name, value) in http.allHeaderFields {
            if let name = name as? String, let value = value as? String { responseHeaders[name.lowercased()] = value }
        }
        logger.trace("s3 \(operation) \(resource(key)): HTTP \(http.statusCode), \(data.count) bytes")
        return Response(status: http.statusCode, headers: responseHeaders, body: [UInt8](data))
    }

    /// The error an unsuccessful response stands for: S3's `<Error>` body read when there is one.
    func failure(_ response: Response, _ operation: String, _ key: String?) -> S3Error {
        let error = response.body.isEmpty ? nil : XMLElement.parse(response.body)
        let code = error?["Code"]
        let message = error?["Message"] ?? (response.body.isEmpty ? "no error body" : "")
        return S3Error(
            operation: operation, resource: resource(key), reason: S3Error.reason(status: response.status, code: code),
            status: response.status, code: code, message: message,
            requestID: error?["RequestId"] ?? response.header("x-amz-request-id"))
    }

    /// The response when its status is 2xx, else its error.
    func succeeded(_ response: Response, _ operation: String, _ key: String?) throws(S3Error) -> Response {
        guard (200..<300).contains(response.status) else { throw failure(response, operation, key) }
        return response
    }

    /// The XML of a successful response, or a `malformedResponse` error.
    func xml(_ response: Response, _ operation: String, _ key: String?) throws(S3Error) -> XMLElement {
        guard let root = XMLElement.parse(response.body) else {
            throw S3Error(
                operation: operation, resource: resource(key), reason: .malformedResponse, status: response.status, code: nil,
                message: "the reply's XML could not be read: \(String(decoding: response.body.prefix(200), as: UTF8.self))")
        }
        return root
    }

    static func transportError(_ error: any Error, operation: String, resource: String, endpoint: String) -> S3Error {
        let reason: S3Error.Reason
        let what: String
        var code = "\(error)"
        if let urlError = error as? URLError {
            code = "URLError(\(urlError.code.rawValue))"
            switch urlError.code {
            case .timedOut:
                (reason, what) = (.timedOut, "no reply from \(endpoint) within the timeout")
            case .cannotConnectToHost, .cannotFindHost, .dnsLookupFailed, .notConnectedToInternet, .cannotLoadFromNetwork:
                (reason, what) = (.unreachable, "could not connect to \(endpoint)")
            case .secureConnectionFailed, .serverCertificateUntrusted, .serverCertificateHasBadDate, .serverCertificateNotYetValid,
                .serverCertificateHasUnknownRoot:
                (reason, what) = (.unreachable, "no trusted TLS connection to \(endpoint)")
            default:
                (reason, what) = (.connectionLost, "the connection to \(endpoint) broke")
            }
        } else {
            (reason, what) = (.connectionLost, "the connection to \(endpoint) failed")
        }
        return S3Error(
            operation: operation, resource: resource, reason: reason, status: nil, code: code,
            message: "\(what) (\(error.localizedDescription))")
    }
}
