import Foundation
import GatewayAssembly
import GatewayTestSupport
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Logging
import NIOCore
import Testing

@testable import GatewayService
@testable import GatewaySupabase
@testable import ServiceKit

/// Success paths of the in-process router with its ``ServiceClients`` connected to the real
/// services: one stack (``GatewayHarness``: Legal, Audit, Accounts, Documents and a gateway on a
/// private database) for the whole target, started once. A user signs up through the stack's
/// gateway; the in-process router then serves that user's reads from the same services.
@Suite struct SuccessPathTests {
    @Test func familiesAnswerFromTheRealServices() async throws {
        try await GatewayHarness.run { harness in
            let environment = EnvironmentReader(harness.gatewayEnvironment.merging(["HEALTH_PORT": "0"]) { $1 })
            let logger = Logger(label: "gateway-router-tests") { _ in SwiftLogNoOpLogHandler() }
            let configuration = try CommonConfiguration(environment: environment, defaultHealthPort: 0)
            let runtime = ServiceRuntime(name: "gateway", configuration: configuration, logger: logger, metrics: MetricsBootstrap.bootstrap())
            let settings = try GatewayProcessSettings(environment: environment)
            let services = try await ServiceClients.connect(
                GatewayApplication.peers, peers: settings.core.peers, timeout: settings.core.busTimeout, logger: logger)
            let router = GatewayApplication.makeRouter(
                runtime: runtime, settings: settings.core, modules: settings.modules, services: services,
                sessions: SessionVerifier(maximumStaleness: .seconds(5)),
                catalog: RouteCatalog())
            let user = try await harness.signedUpUser()
            let terms = try await harness.currentTerms()
            let bearer: HTTPFields = [.authorization: "Bearer " + user.token]
            let app = Application(router: router, logger: logger)
            try await app.test(.router) { client in
                // Legal: the text in effect with its ETag, then 304 for it.
                let tag = try await client.execute(uri: "/api/legal/privacy_policy", method: .get) { response in
                    #expect(response.status == .ok)
                    let body = try JSONSerialization.jsonObject(with: Data(response.body.readableBytesView)) as? [String: Any]
                    #expect(body?["content"] is String)
                    return try #require(response.headers[.eTag])
                }
                try await client.execute(uri: "/api/legal/privacy_policy", method: .get, headers: [.ifNoneMatch: tag]) {
                    #expect($0.status == .notModified)
                }
                // The seed's read, in its own shape.
                try await client.execute(uri: "/api/terms", method: .get) { response in
                    #expect(response.status == .ok)
                    let body = try JSONSerialization.jsonObject(with: Data(response.body.readableBytesView)) as? [String: Any]
                    #expect(body?["version"] as? String == terms)
                }
                // Accounts and consent: the signed-in groups let the session through.
                try await client.execute(uri: "/api/me", method: .get, headers: bearer) { response in
                    #expect(response.status == .ok)
                    let body = try JSONSerialization.jsonObject(with: Data(response.body.readableBytesView)) as? [String: Any]
                    #expect((body?["id"] as? String)?.lowercased() == user.id.lowercased())
                }
                try await client.execute(uri: "/api/me/consents", method: .get, headers: bearer) { #expect($0.status == .ok) }
                // Documents: the terms-gated group lets a user who accepted the terms through.
                try await client.execute(uri: "/api/documents", method: .get, headers: bearer) { response in
                    #expect(response.status == .ok, "\(String(buffer: response.body))")
                }
                try await client.execute(uri: "/api/documents/\(RouteProbes.id)", method: .get, headers: bearer) { response in
                    ErrorShape.check(response, status: 404, style: .native, method: .get)
                }
                // Storage: the same group, the same refusal in Storage's body.
                try await client.execute(uri: "/storage/v1/object/documents/\(RouteProbes.id)/cv.pdf", method: .get, headers: bearer) { response in
                    ErrorShape.check(response, status: 404, style: .storage, method: .get)
                }
            }
            await services.close()
        }
    }
}
