import Foundation
import HTTPTypes
import HummingbirdTesting
import NIOCore
import Testing

@testable import GatewayService
@testable import GatewaySupabase

/// What an error answer must look like in each family's body (``ErrorFormat``), and the headers
/// every error carries: `X-Request-Id`, `WWW-Authenticate: Bearer` on a 401 of the bodies that
/// name it, `Retry-After` on every 503.
enum ErrorShape {
    static let requestID = HTTPField.Name("X-Request-Id")!

    static func check(
        _ response: TestResponse, status: Int, style: ErrorFormat, method: HTTPRequest.Method, sourceLocation: SourceLocation = #_sourceLocation
    ) {
        #expect(response.status.code == status, "status", sourceLocation: sourceLocation)
        #expect(response.headers[requestID]?.isEmpty == false, "X-Request-Id", sourceLocation: sourceLocation)
        if status == 503 { #expect(response.headers[.retryAfter] != nil, "Retry-After on a 503", sourceLocation: sourceLocation) }
        guard method != .head else { return }  // no body to check
        #expect(response.headers[.contentType]?.hasPrefix("application/json") == true, "JSON", sourceLocation: sourceLocation)
        let object = (try? JSONSerialization.jsonObject(with: Data(response.body.readableBytesView))) as? [String: Any]
        guard let object else {
            Issue.record("the error body is not a JSON object: \(String(buffer: response.body))", sourceLocation: sourceLocation)
            return
        }
        switch style {
        case .native:
            #expect(object["error"] is String && object["message"] is String, "native error and message", sourceLocation: sourceLocation)
            #expect(object["requestId"] as? String == response.headers[requestID], "requestId is X-Request-Id", sourceLocation: sourceLocation)
            if status == 401 { #expect(response.headers[.wwwAuthenticate] == "Bearer", sourceLocation: sourceLocation) }
        case .onboarding:
            #expect(Set(object.keys) == ["error"] && object["error"] is String, "the seed's {error}: \(object)", sourceLocation: sourceLocation)
            if status == 401 { #expect(response.headers[.wwwAuthenticate] == "Bearer", sourceLocation: sourceLocation) }
        case .postgrest:
            #expect(Set(object.keys) == ["code", "message", "details", "hint"], "PostgREST's error: \(object)", sourceLocation: sourceLocation)
            #expect(object["code"] is String && object["message"] is String, sourceLocation: sourceLocation)
        case .storage:
            #expect(object["statusCode"] as? String == String(status), "Storage's statusCode: \(object)", sourceLocation: sourceLocation)
            #expect(object["error"] is String && object["message"] is String, sourceLocation: sourceLocation)
            if status == 401 { #expect(response.headers[.wwwAuthenticate] == "Bearer", sourceLocation: sourceLocation) }
        case .gotrue:
            #expect(object["code"] as? Int == status, "GoTrue's code: \(object)", sourceLocation: sourceLocation)
            #expect(object["error_code"] is String && object["msg"] is String, sourceLocation: sourceLocation)
        default:
            Issue.record("no shape known for the error format \(style)", sourceLocation: sourceLocation)
        }
    }
}
