import GatewayAssembly
import ServiceKit
import Testing

@testable import GatewayService
@testable import GatewaySupabase

/// The gateway's settings (the core's and the Supabase module's): defaults, and refusals that name
/// the variable without echoing secrets.
struct GatewaySettingsTests {
    @Test func defaults() throws {
        let settings = try GatewaySettings(environment: EnvironmentReader([:]))
        #expect(settings.httpPort == 8080 && settings.httpHost == "127.0.0.1")
        #expect(!settings.legacyUnauthenticatedClients && settings.appleBundleID == nil)
        #expect(settings.maxBodyBytes == 65536 && settings.busTimeout == .seconds(5))
        #expect(settings.peers.endpoints[.accounts] == ["tcp://127.0.0.1:5552"] && settings.peers.keys == nil)
        #expect(try GatewayProcessSettings(environment: EnvironmentReader([:])).supabase.anonymousKey == nil)
        #expect(settings.legalRefresh == .seconds(5) && settings.peers.eventEndpoints[.legal] == ["tcp://127.0.0.1:5651"])
        #expect(settings.strictTransportSecurity == "max-age=31536000; includeSubDomains")
        #expect(try GatewaySettings(environment: EnvironmentReader(["GATEWAY_HSTS": "off"])).strictTransportSecurity == nil)
        #expect(settings.peers.eventLoop == .perSocket)
        #expect(try GatewaySettings(environment: EnvironmentReader(["BUS_EVENT_LOOP": "single"])).peers.eventLoop == .single)
    }

    @Test func refusals() {
        func refusal(_ environment: [String: String]) -> ConfigurationError? {
            do {
                _ = try GatewayProcessSettings(environment: EnvironmentReader(environment))
                return nil
            } catch { return error as? ConfigurationError }
        }
        #expect(refusal(["GATEWAY_TRUSTED_PROXIES": "10.0.0.0/8, nonsense"])?.variable == "GATEWAY_TRUSTED_PROXIES")
        let short = refusal(["GATEWAY_JWT_SECRET": "too-short-secret"])
        #expect(short?.variable == "GATEWAY_JWT_SECRET" && !"\(short!)".contains("too-short-secret"))
        #expect(refusal(["GATEWAY_APPLE_JWKS": "http://appleid.apple.com/auth/keys"])?.variable == "GATEWAY_APPLE_JWKS")
        #expect(refusal(["GATEWAY_HTTP_PORT": "70000"])?.variable == "GATEWAY_HTTP_PORT")
        #expect(refusal(["GATEWAY_LEGACY_UNAUTHENTICATED_CLIENTS": "maybe"])?.variable == "GATEWAY_LEGACY_UNAUTHENTICATED_CLIENTS")
        #expect(refusal(["GATEWAY_LEGAL_REFRESH": "50ms"])?.variable == "GATEWAY_LEGAL_REFRESH")
        #expect(refusal(["GATEWAY_LEGAL_REFRESH": "soon"])?.variable == "GATEWAY_LEGAL_REFRESH")
        #expect(refusal(["GATEWAY_HSTS": "forever"])?.variable == "GATEWAY_HSTS")
        // The services' rule and message (BusSettings), not a silent fall-back to the default.
        let eventLoop = refusal(["BUS_EVENT_LOOP": "threads"])
        #expect(eventLoop.map(String.init(describing:)) == #"BUS_EVENT_LOOP="threads" is invalid: expected one of single, per-socket"#)
    }

    @Test func anonymousKeyIsHS256WithRoleAnon() async throws {
        let key = try #require(AnonymousKey(secret: String(repeating: "s", count: 40)))
        let token = try await key.issue()
        #expect(await key.isValid(token))
        let other = try #require(AnonymousKey(secret: String(repeating: "t", count: 40)))
        #expect(await !other.isValid(token))
        #expect(await !key.isValid(token + "x"))
        #expect(await !key.isValid("a.b.c"))
    }
}
