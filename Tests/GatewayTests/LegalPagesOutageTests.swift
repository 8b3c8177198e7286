import Foundation
import GatewayTestSupport
import TestSupport
import Testing

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

                // "Last Updated" is the instant of publication: PostgREST says it as seed 000/001's
                // example does (`…T…:…:…Z`, which ISO8601DateFormatter's defaults parse), and the
                // page carries the same instant for the reader's zone.
                let anon = try await PostgRESTTests.anonKey()
                let rows = try await http.get("/rest/v1/legal_documents?select=type,last_updated,version", headers: PostgRESTTests.keys(anon))
                    .jsonArray
                #expect(rows.count == 2)
                for row in rows {
                    let text = try #require(row["last_updated"] as? String)
                    #expect(text.wholeMatch(of: /\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z/) != nil, "\(text)")
                    let instant = try #require(ISO8601DateFormatter().date(from: text))
                    #expect(abs(instant.timeIntervalSinceNow) < 600, "the default texts were published when this stack started: \(text)")
                    let page = row["type"] as? String == "privacy_policy" ? "/legal/privacy" : "/legal/terms"
                    #expect(served[page]?.contains("<time datetime=\"\(text)\">") == true, "\(page) shows \(text)")
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
