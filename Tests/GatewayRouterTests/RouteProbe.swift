import Foundation
import HTTPTypes
import Testing

@testable import GatewayService

/// One request to the in-process router and what it must answer: the catalog route it exercises
/// (`"METHOD /hummingbird/:path"`), the concrete request, and the status with the error body of
/// the route's family (``ErrorFormat``), or a success status.
struct RouteProbe: Sendable, CustomTestStringConvertible {
    enum Answer: Sendable {
        /// An error answer: `status` with the body shape of `style` (none checked for HEAD).
        case error(Int, ErrorFormat)
        /// A success (or a non-JSON answer) with this status.
        case status(Int)
    }

    let route: String?
    let method: HTTPRequest.Method
    let uri: String
    var headers: HTTPFields = [:]
    var body: String?
    let answer: Answer

    var testDescription: String { "\(method.rawValue) \(uri) → \(answer)" }

    init(_ route: String?, _ method: HTTPRequest.Method, _ uri: String, headers: HTTPFields = [:], body: String? = nil, _ answer: Answer) {
        self.route = route
        self.method = method
        self.uri = uri
        self.headers = headers
        self.body = body
        self.answer = answer
    }

    /// A probe of catalog route `route` whose concrete path is the route's own.
    init(_ route: String, headers: HTTPFields = [:], body: String? = nil, _ answer: Answer) {
        let parts = route.split(separator: " ", maxSplits: 1)
        self.init(route, HTTPRequest.Method(String(parts[0]))!, String(parts[1]), headers: headers, body: body, answer)
    }
}
