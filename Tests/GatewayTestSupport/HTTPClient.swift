import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// One HTTP exchange with the gateway, as a test sees it.
public struct HTTPReply: Sendable {
    public let status: Int
    public let headers: [String: String]
    public let body: Data

    public init(status: Int, headers: [String: String], body: Data) {
        self.status = status
        self.headers = headers
        self.body = body
    }

    public func header(_ name: String) -> String? {
        headers.first { $0.key.lowercased() == name.lowercased() }?.value
    }

    public var text: String { String(decoding: body, as: UTF8.self) }

    /// The body as a JSON object (empty when it is not one).
    public var json: [String: Any] { (try? JSONSerialization.jsonObject(with: body)) as? [String: Any] ?? [:] }
    public var jsonArray: [[String: Any]] { (try? JSONSerialization.jsonObject(with: body)) as? [[String: Any]] ?? [] }
}

/// A plain URLSession client (FoundationNetworking: libcurl on its own threads), no cache, no cookies.
public struct HTTPClient: Sendable {
    public let base: String
    private let session: URLSession

    public init(port: Int) {
        base = "http://127.0.0.1:\(port)"
        let configuration = URLSessionConfiguration.ephemeral
        configuration.requestCachePolicy = .reloadIgnoringLocalCacheData
        configuration.urlCache = nil
        configuration.timeoutIntervalForRequest = 30
        session = URLSession(configuration: configuration)
    }

    /// `method` on `path` (under ``base``) or on an absolute URL.
    public func send(
        _ method: String, _ path: String, json: Any? = nil, body: Data? = nil, headers: [String: String] = [:]
    ) async throws -> HTTPReply {
        // An absolute URL (a file_url, an upload Location) is used as it is.
        var request = URLRequest(url: URL(string: path.hasPrefix("http://") || path.hasPrefix("https://") ? path : base + path)!)
        request.httpMethod = method
        if let json {
            request.httpBody = try JSONSerialization.data(withJSONObject: json)
            request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        } else if let body {
            request.httpBody = body
        }
        for (name, value) in headers { request.setValue(value, forHTTPHeaderField: name) }
        let (data, response) = try await session.data(for: request)
        let http = response as! HTTPURLResponse
        var headers: [String: String] = [:]
        for (key, value) in http.allHeaderFields { headers["\(key)"] = "\(value)" }
        return HTTPReply(status: http.statusCode, headers: headers, body: data)
    }

    public func get(_ path: String, headers: [String: String] = [:]) async throws -> HTTPReply {
        try await send("GET", path, headers: headers)
    }

    public static func bearer(_ token: String) -> [String: String] { ["Authorization": "Bearer " + token] }
}
