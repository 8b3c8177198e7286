import BusCore

/// A complete HTTP/1.1 response. Every response closes the connection: probes and scrapers open
/// one connection per request, and it keeps the server's state machine to one request.
struct HTTPResponse: Equatable {
    var status: Int
    var contentType: String
    var body: String
    var extraHeaders: [String] = []

    static func json(_ status: Int, _ body: String) -> HTTPResponse {
        HTTPResponse(status: status, contentType: "application/json", body: body)
    }

    /// A small JSON error body, `{"error":"not found"}`.
    static func error(_ status: Int, extraHeaders: [String] = []) -> HTTPResponse {
        HTTPResponse(
            status: status, contentType: "application/json",
            body: JSONString.object([("error", JSONString.quoted(reason(status).lowercased()))]),
            extraHeaders: extraHeaders)
    }

    /// The bytes on the wire: status line, headers, blank line, body.
    func serialized() -> [UInt8] {
        let body = Array(body.utf8)
        var head = "HTTP/1.1 \(status) \(Self.reason(status))\r\n"
        head += "Content-Type: \(contentType)\r\nContent-Length: \(body.count)\r\n"
        head += "Cache-Control: no-store\r\nConnection: close\r\n"
        for header in extraHeaders { head += header + "\r\n" }
        return Array((head + "\r\n").utf8) + body
    }

    static func reason(_ status: Int) -> String {
        switch status {
        case 200: "OK"
        case 400: "Bad Request"
        case 404: "Not Found"
        case 405: "Method Not Allowed"
        case 408: "Request Timeout"
        case 431: "Request Header Fields Too Large"
        case 503: "Service Unavailable"
        default: "Internal Server Error"
        }
    }
}
