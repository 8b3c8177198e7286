import Foundation
import GatewayTestSupport
import TestSupport
import Testing

@testable import GatewayService

extension GatewayIntegration {
    /// The public legal pages and the OpenAPI document, through the real gateway.
    @Suite(.serialized) struct PagesAndOpenAPITests {
        @Test func legalPagesAreSafeStandaloneHTML() async throws {
            try await GatewayHarness.run { harness in
                for (path, title) in [("/legal/privacy", "Privacy Policy"), ("/legal/terms", "Terms and Conditions")] {
                    let page = try await harness.http.get(path)
                    #expect(page.status == 200)
                    #expect(page.header("Content-Type") == "text/html; charset=utf-8")
                    let csp = try #require(page.header("Content-Security-Policy"))
                    #expect(csp.hasPrefix("default-src 'none'") && csp.contains("script-src 'sha256-") && !csp.contains("unsafe"))
                    #expect(page.header("Set-Cookie") == nil)
                    let html = page.text
                    #expect(html.hasPrefix("<!DOCTYPE html>\n<html lang=\"en\">"))
                    #expect(html.contains("name=\"viewport\""))
                    #expect(html.components(separatedBy: "<h1>").count == 2 && html.contains("<h1>\(title)</h1>"))
                    #expect(html.contains("Last Updated: <time datetime=\""))
                    // One script, the page's own date script (pinned by hash in the CSP), nothing loaded.
                    #expect(html.components(separatedBy: "<script").count == 2 && html.contains("<script>\(LegalPage.dateScript)</script>"))
                    #expect(!html.contains("src=") && !html.contains("http://") && !html.contains("<link"))
                    let etag = try #require(page.header("ETag"))
                    #expect(try await harness.http.get(path, headers: ["If-None-Match": etag]).status == 304)
                    let head = try await harness.http.send("HEAD", path)
                    #expect(head.status == 200 && head.body.isEmpty && head.header("ETag") == etag)
                }
                let privacy = try await harness.http.get("/legal/privacy")
                #expect(privacy.text.contains("<blockquote>") && privacy.text.contains("href=\"mailto:privacy@recruitingcompass.com\""))
                #expect(privacy.text.components(separatedBy: "<h2 ").count - 1 == 12)
            }
        }

        @Test func openAPIDocumentsEveryRoute() async throws {
            try await GatewayHarness.run { harness in
                let reply = try await harness.http.get("/openapi.json")
                #expect(reply.status == 200 && reply.json["openapi"] as? String == "3.0.3")
                let paths = try #require(reply.json["paths"] as? [String: [String: Any]])
                // Every route the gateway serves (a fixed list here, so a route dropped from the
                // document, or added without a test, shows).
                let expected: [(String, String)] = [
                    ("get", "/healthz"), ("get", "/readyz"), ("get", "/metrics"), ("get", "/openapi.json"),
                    ("get", "/api/terms"), ("post", "/api/users"), ("put", "/api/users/{id}/accept-tos"),
                    ("post", "/api/auth/apple"), ("post", "/api/auth/refresh"), ("post", "/api/auth/sign-out"),
                    ("post", "/api/apple/notifications"), ("post", "/api/auth/apple/authorization-code"),
                    ("get", "/api/deletion-certificates/{certificateId}"),
                    ("get", "/api/legal/{type}"), ("get", "/api/legal/{type}/outline"), ("get", "/api/legal/{type}/versions"),
                    ("get", "/api/legal/{type}/versions/{version}"),
                    ("get", "/api/me"), ("patch", "/api/me"), ("get", "/api/me/export"), ("post", "/api/me/eligibility"),
                    ("get", "/api/me/deletion/preview"), ("post", "/api/me/deletion"),
                    ("post", "/api/me/deletion/{requestId}/confirm"), ("delete", "/api/me/deletion/{requestId}"),
                    ("get", "/api/me/consents"), ("get", "/api/me/consents/history"), ("post", "/api/me/consents/{type}/{action}"),
                    ("post", "/api/receipts/verify"), ("get", "/legal/privacy"), ("get", "/legal/terms"),
                    ("get", "/rest/v1/legal_documents"), ("get", "/rest/v1/legal_acceptances"), ("post", "/rest/v1/legal_acceptances"),
                    ("post", "/api/documents"), ("get", "/api/documents"), ("get", "/api/documents/{reference}"),
                    ("delete", "/api/documents/{reference}"), ("get", "/api/documents/{reference}/position"),
                    ("get", "/api/documents/{reference}/content"), ("post", "/api/documents/{reference}/share-links"),
                    ("get", "/api/documents/{reference}/share-links"), ("delete", "/api/share-links/{linkId}"), ("get", "/api/shared/{token}"),
                    ("options", "/api/uploads"), ("options", "/api/uploads/{id}"), ("post", "/api/uploads"), ("head", "/api/uploads/{id}"),
                    ("patch", "/api/uploads/{id}"), ("delete", "/api/uploads/{id}"), ("get", "/rest/v1/documents"),
                    ("get", "/storage/v1/object/{bucket}/{path}"), ("get", "/storage/v1/object/authenticated/{bucket}/{path}"),
                    ("get", "/storage/v1/object/public/{bucket}/{path}"), ("post", "/storage/v1/object/sign/{bucket}/{path}"),
                    ("get", "/storage/v1/object/sign/{bucket}/{path}"),
                    ("post", "/auth/v1/token"), ("post", "/auth/v1/logout"), ("get", "/auth/v1/user"),
                ]
                for (method, path) in expected {
                    #expect(paths[path]?[method] != nil, "\(method.uppercased()) \(path) missing from /openapi.json")
                }
                let documented = paths.reduce(0) { $0 + $1.value.count }
                #expect(documented == expected.count, "the document has routes this test does not know")
            }
        }
    }
}
