import Testing

@testable import Bus

/// The rule that decides whom a request acts as, with plain values: what a peer may claim over
/// CURVE, what the transport alone establishes, and plaintext's development-only trust.
@Suite struct PrincipalTrustTests {
    let curve = PrincipalTrust(authenticatesPeers: true, asserters: ["gateway", "accounts", "operator"])

    @Test func aPeerAllowedToAssertActsAsTheUserItNames() {
        #expect(curve.principal(claimed: .user("u1"), peer: "gateway") == .user("u1"))
        #expect(curve.principal(claimed: .service("documents"), peer: "accounts") == .service("documents"))
    }

    @Test func aPeerNotAllowedToAssertIsItself() {
        #expect(curve.principal(claimed: .user("u1"), peer: "documents") == .service("documents"))
        #expect(curve.principal(claimed: .operator("ops"), peer: "documents") == .service("documents"))
    }

    @Test func onlyTheOperatorsKeyActsAsAnOperator() {
        #expect(curve.principal(claimed: .operator("alice"), peer: "operator") == .operator("alice"))
        #expect(curve.principal(claimed: .operator("alice"), peer: "gateway") == .service("gateway"))
        let everyone = PrincipalTrust(authenticatesPeers: true, asserters: nil)
        #expect(everyone.principal(claimed: .operator("alice"), peer: "audit") == .service("audit"))
        #expect(everyone.principal(claimed: .user("u2"), peer: "audit") == .user("u2"))
    }

    @Test func withoutAClaimOrAPeerTheTransportDecides() {
        #expect(curve.principal(claimed: nil, peer: "gateway") == .service("gateway"))
        #expect(curve.principal(claimed: .user("u1"), peer: nil) == .anonymous)
    }

    @Test func plaintextHonoursEveryClaim() {
        let plaintext = PrincipalTrust(authenticatesPeers: false, asserters: ["gateway"])
        #expect(plaintext.principal(claimed: .operator("x"), peer: nil) == .operator("x"))
        #expect(plaintext.principal(claimed: .user("u1"), peer: "documents") == .user("u1"))
        #expect(plaintext.principal(claimed: nil, peer: nil) == .anonymous)
    }
}
