import Foundation
import GatewayTestSupport
import Testing
import TestSupport

extension GatewayIntegration {
    /// The public legal pages (the privacy policy URL given to App Store Connect) while the Legal
    /// process is stopped: a gateway that served them keeps answering from the last texts, as HTML
    /// marked stale; a gateway started while Legal is down answers a 503 HTML page, never JSON.
    /// Served through the TLS proxy, they carry HSTS.
    @Suite(.serialized) struct LegalPagesOutageTests {
        static let pages = ["/legal/privacy", "/legal/terms"]

        @Test func thePagesOutliveLegalAndAFreshGatewaySaysUnavailableInHTML() async throws {
            try await GatewayHarness.run { harness in
                let http = harness.http
                var served: [String: String] = [:]
                for path in Self.pages {
                    let page = try await http.get(path)
                    #expect(page.status == 200 && page.header("X-Compass-Stale") == nil)
                    served[path] = page.text
                }

                // Behind the TLS proxy (a trusted proxy saying https), every answer carries HSTS;
                // a client that claims https itself, or plain HTTP, gets none.
                let viaProxy = try await http.get("/legal/privacy", headers: ["X-Forwarded-Proto": "https"])
                #expect(viaProxy.header("Strict-Transport-Security") == "max-age=31536000; includeSubDomains")
                let errorViaProxy = try await http.get("/api/documents", headers: ["X-Forwarded-Proto": "https"])
                #expect(errorViaProxy.status == 401 && errorViaProxy.header("Strict-Transport-Security") != nil)
                #expect(try await http.get("/legal/privacy").header("Strict-Transport-Security") == nil)

                await harness.stop("Legal")
                try await withTimeout(.seconds(15), "the stale marker") {
                    while try await http.get("/legal/privacy").header("X-Compass-Stale") != "true" { try await Task.sleep(for: .milliseconds(50)) }
                }
                for path in Self.pages {
                    let page = try await http.get(path)
                    #expect(page.status == 200, "\(path)")
                    #expect(page.header("Content-Type") == "text/html; charset=utf-8" && page.header("X-Compass-Stale") == "true", "\(path)")
                    #expect(page.text == served[path], "\(path): the last text served, unchanged")
                }

                // A second gateway, started now, never had the texts.
                let fresh = try await PeerProcess("Gateway", environment: harness.gatewayEnvironment)
                defer { fresh.kill() }
                let client = HTTPClient(port: try GatewayHarness.port(of: fresh))
                for path in Self.pages {
                    let page = try await client.get(path)
                    #expect(page.status == 503, "\(path): \(page.status)")
                    #expect(page.header("Content-Type") == "text/html; charset=utf-8", "\(path)")
                    #expect(page.header("Retry-After") == "30" && page.header("Cache-Control") == "no-store", "\(path)")
                    #expect(page.text.hasPrefix("<!DOCTYPE html>") && page.text.contains("cannot be shown right now"), "\(path)")
                }
                // The JSON routes keep their JSON errors.
                let json = try await client.get("/api/legal/privacy_policy")
                #expect(json.status == 503 && json.json["error"] as? String == "unavailable")
            }
        }
    }
}
