import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NIOCore
import Testing

@testable import GatewayService
@testable import GatewaySupabase

/// Every route of the gateway's router, in process: each catalogued route's refusals and error
/// bodies by family, the 503 of a backend that is not connected, requests no route matches, and
/// the group middleware's order (a tus version before the credential, a per-address limit
/// before the body). The end-to-end answers with real services are GatewayTests' and
/// SecurityTests'.
@Suite struct RouterAnswerTests {
    @Test(arguments: RouteProbes.all)
    func answers(_ probe: RouteProbe) async throws {
        try await InProcessGateway.test { client in
            try await client.execute(
                uri: probe.uri, method: probe.method, headers: probe.headers, body: probe.body.map { ByteBuffer(string: $0) }
            ) { response in
                switch probe.answer {
                case .error(let status, let style): ErrorShape.check(response, status: status, style: style, method: probe.method)
                case .status(let status): #expect(response.status.code == status, "\(String(buffer: response.body).prefix(300))")
                }
            }
        }
    }

    /// A route added to the gateway without a probe here fails this test, as does a probe of a
    /// route the gateway no longer has.
    @Test func everyCatalogRouteIsProbed() throws {
        let catalog = Set(try InProcessGateway.make().catalog.all.map { $0.method + " " + $0.path })
        var probed = Set(RouteProbes.all.compactMap(\.route))
        probed.insert("GET /readyz")  // ``readinessAnswersAsItSays()``
        #expect(catalog.subtracting(probed).sorted() == [], "catalogued routes without a probe")
        #expect(probed.subtracting(catalog).sorted() == [], "probes of routes the catalog does not have")
    }

    /// Every route answers in the error body its group declares, and a request under the same
    /// paths that no route matches gets the same body: the group's style and the fallback for
    /// unmatched requests agree.
    @Test func eachFamilysUnmatchedRequestsGetItsErrorBody() throws {
        let unmatched = GatewayApplication.unmatchedPathErrors(try InProcessGateway.settings().modules)
        for entry in try InProcessGateway.make().catalog.all {
            #expect(
                unmatched.renderer(forUnmatched: entry.path).format == entry.errors.format,
                "\(entry.method) \(entry.path)")
        }
    }

    @Test func readinessAnswersAsItSays() async throws {
        try await InProcessGateway.test { client in
            try await client.execute(uri: "/readyz", method: .get) { response in
                let body = try JSONSerialization.jsonObject(with: Data(response.body.readableBytesView)) as? [String: Any]
                let ready = try #require(body?["ready"] as? Bool)
                #expect(response.status == (ready ? .ok : .serviceUnavailable))
                #expect(body?["checks"] is [String: Any])
            }
        }
    }

    @Test func healthAndOpenAPIAnswerWithoutBackends() async throws {
        let catalog = try InProcessGateway.make().catalog.all
        try await InProcessGateway.test { client in
            try await client.execute(uri: "/healthz", method: .get) { response in
                let body = try JSONSerialization.jsonObject(with: Data(response.body.readableBytesView)) as? [String: Any]
                #expect(body?["status"] as? String == "ok")
                #expect(body?["service"] as? String == "gateway")
            }
            try await client.execute(uri: "/openapi.json", method: .get) { response in
                let body = try JSONSerialization.jsonObject(with: Data(response.body.readableBytesView)) as? [String: Any]
                let paths = try #require(body?["paths"] as? [String: Any])
                #expect(paths.count == Set(catalog.map(\.path)).count, "one OpenAPI path per catalogued path")
            }
        }
    }

    @Test func tusOptionsAnswerTheProtocol() async throws {
        try await InProcessGateway.test { client in
            try await client.execute(uri: "/api/uploads", method: .options) { response in
                #expect(response.status == .noContent)
                #expect(response.headers[HTTPField.Name("Tus-Version")!] == "1.0.0")
                #expect(response.headers[HTTPField.Name("Tus-Extension")!] == "creation,expiration,termination")
            }
        }
    }

    /// The sign-in group's per-address limit (default 1 a second, burst 30) is taken before the
    /// body is read: bad bodies spend it too. The first 30 are answered 400; a 429 with
    /// `Retry-After` follows (a few more may pass as the budget refills on a slow machine).
    @Test func signInGroupLimitsPerAddressBeforeTheBody() async throws {
        try await InProcessGateway.test { client in
            var statuses: [Int] = []
            while statuses.count < 60, statuses.last != 429 {
                let status = try await client.execute(
                    uri: statuses.count % 2 == 0 ? "/api/auth/refresh" : "/api/auth/apple", method: .post, headers: RouteProbes.json,
                    body: ByteBuffer(string: "{")
                ) { response in
                    if response.status == .tooManyRequests {
                        #expect(response.headers[.retryAfter] != nil)
                        let body = try JSONSerialization.jsonObject(with: Data(response.body.readableBytesView)) as? [String: Any]
                        #expect(body?["error"] as? String == "rate_limited")
                    }
                    return Int(response.status.code)
                }
                statuses.append(status)
            }
            #expect(statuses.prefix(30).allSatisfy { $0 == 400 }, "\(statuses)")
            #expect(statuses.last == 429, "\(statuses)")
        }
    }

    /// The consent writes' per-address limit (default 2 a second, burst 60) comes before the
    /// credential: requests without one spend it, and a 429 comes rather than the 401.
    @Test func consentWritesLimitPerAddressBeforeTheCredential() async throws {
        try await InProcessGateway.test { client in
            let uri = "/api/me/consents/privacy_policy/acknowledge"
            var statuses: [Int] = []
            while statuses.count < 120, statuses.last != 429 {
                statuses.append(try await client.execute(uri: uri, method: .post) { Int($0.status.code) })
            }
            #expect(statuses.prefix(60).allSatisfy { $0 == 401 }, "\(statuses)")
            #expect(statuses.last == 429, "\(statuses)")
            // Reading one's consents is outside the write group: still 401.
            try await client.execute(uri: "/api/me/consents", method: .get) { #expect($0.status == .unauthorized) }
        }
    }

    /// Supabase Auth's gate: a wrong `apikey` is refused before the route runs, in GoTrue's body,
    /// the versioned one (`{code, message}` and the version header) when the client asks for it.
    @Test func supabaseAuthGateChecksTheKeyFirst() async throws {
        try await InProcessGateway.test { client in
            try await client.execute(uri: "/auth/v1/user", method: .get, headers: [SupabaseModule.apiKeyHeader: "not-the-anon-key"]) {
                ErrorShape.check($0, status: 401, style: .gotrue, method: .get)
            }
            let versioned: HTTPFields = [GoTrueError.apiVersionHeader: "2024-01-01"]
            try await client.execute(uri: "/auth/v1/token?grant_type=password", method: .post, headers: versioned) { response in
                #expect(response.status == .unauthorized)
                #expect(response.headers[GoTrueError.apiVersionHeader] == "2024-01-01")
                let body = try JSONSerialization.jsonObject(with: Data(response.body.readableBytesView)) as? [String: Any]
                #expect(body?["code"] as? String == "no_api_key")
                #expect(body?["message"] is String)
            }
        }
    }

    /// A bearer token that is not a session token (the anon key's kind) is refused by the
    /// signed-in groups in each family's body.
    @Test func signedInGroupsRefuseTokensThatAreNotSessions() async throws {
        let bearer: HTTPFields = [.authorization: "Bearer not-a-jwt"]
        try await InProcessGateway.test { client in
            try await client.execute(uri: "/api/me", method: .get, headers: bearer) {
                ErrorShape.check($0, status: 401, style: .native, method: .get)
            }
            try await client.execute(uri: "/storage/v1/object/documents/\(RouteProbes.id)/a.pdf", method: .get, headers: bearer) {
                ErrorShape.check($0, status: 401, style: .storage, method: .get)
            }
            try await client.execute(uri: "/api/users/\(RouteProbes.id)/accept-tos", method: .put, headers: bearer) {
                ErrorShape.check($0, status: 401, style: .onboarding, method: .put)
            }
            try await client.execute(uri: "/api/me", method: .get, headers: [.authorization: "Basic abc"]) {
                ErrorShape.check($0, status: 401, style: .native, method: .get)
            }
        }
    }
}
