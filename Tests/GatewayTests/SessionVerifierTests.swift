import Contracts
import Crypto
import Foundation
import Identity
import ServiceKit
import Testing

@testable import GatewayService

/// The gateway's own session check, without I/O: signatures with Accounts' public keys, the
/// revocation list in event order, and failing over to Accounts when it cannot decide.
@Suite struct SessionVerifierTests {
    let signing = try! SessionSigningKey.generate(id: "s1")
    var tokens: SessionTokens { SessionTokens(keys: try! SessionKeySet(current: signing)) }
    let user = UUID()
    let session = UUID()
    /// How long a synced view stays fresh here: far longer than a loaded machine takes between
    /// two lines of a test (verification suspends, and `deploy/test` runs suites side by side),
    /// so only the tests about staleness see a stale view, which they make by hand.
    static let staleness: Duration = .seconds(600)

    func token(issuedAt: Date = Date(), appleSubject: String? = "apple.1", subject: String? = nil) async throws -> String {
        try await tokens.issue(
            userID: subject ?? user.uuidString.lowercased(), sessionID: session.uuidString.lowercased(), appleSubject: appleSubject,
            now: issuedAt
        ).token
    }

    func loadedVerifier(sessions: [SessionRevoked] = [], users: [UserSessionsRevoked] = []) -> SessionVerifier {
        let verifier = SessionVerifier(maximumStaleness: Self.staleness)
        verifier.useKeys([NamedPublicKey(keyId: "s1", publicKey: signing.publicKey.rawRepresentation.base64EncodedString())])
        verifier.withRevocations {
            $0.load(.init(sequence: 7, sessions: sessions, users: users, tokenLifetimeSeconds: 900), leeway: 30)
        }
        verifier.markSynced()
        return verifier
    }

    @Test func aGoodTokenIsValidWithoutAskingAccounts() async throws {
        let verifier = loadedVerifier()
        let token = try await token()
        #expect(await verifier.verdict(on: token) == .valid(userId: user, appleId: "apple.1", sessionId: session))
        // Again, from the cache.
        #expect(await verifier.verdict(on: token) == .valid(userId: user, appleId: "apple.1", sessionId: session))
    }

    @Test func forgedExpiredAndOtherKeysAreRefusedOrSentToAccounts() async throws {
        let verifier = loadedVerifier()
        // One character changed at the start of the signature, where every base64url bit is a
        // signature bit. (Replacing its last two characters could write them back unchanged, or
        // change only the final character's padding bits: a valid token about once in 256 runs.)
        let original = try await token()
        let signatureStart = original.index(after: try #require(original.lastIndex(of: ".")))
        var forged = original
        forged.replaceSubrange(signatureStart...signatureStart, with: original[signatureStart] == "A" ? "B" : "A")
        #expect(await verifier.verdict(on: forged) == .refused)
        #expect(await verifier.verdict(on: try await token(issuedAt: Date().addingTimeInterval(-3600))) == .expired)
        let other = SessionTokens(keys: try SessionKeySet(current: try SessionSigningKey.generate(id: "s2")))
        let rotated = try await other.issue(userID: user.uuidString, sessionID: session.uuidString, appleSubject: "a").token
        #expect(await verifier.verdict(on: rotated) == .undecided)
    }

    @Test func tokensItCannotFullyJudgeGoToAccounts() async throws {
        let verifier = loadedVerifier()
        #expect(await verifier.verdict(on: try await token(appleSubject: nil)) == .undecided)
        let atSignIn = try await token(subject: "apple:apple.1")
        #expect(await verifier.verdict(on: atSignIn) == .undecided)
        // Once Accounts named the account the session is bound to, the token is judged here.
        verifier.bound(atSignIn, to: user, sessionId: session)
        #expect(await verifier.verdict(on: atSignIn) == .valid(userId: user, appleId: "apple.1", sessionId: session))
        verifier.revoked(UserSessionsRevoked(userId: user, revokedAt: Date()))
        #expect(await verifier.verdict(on: atSignIn) == .refused)
        // Only a token whose signature was checked here is remembered.
        let unseen = try await token(issuedAt: Date().addingTimeInterval(-5), subject: "apple:apple.2")
        verifier.bound(unseen, to: UUID(), sessionId: session)
        #expect(await verifier.verdict(on: unseen) == .undecided)
    }

    /// A token Accounts issued through this gateway is held without a signature check: signed
    /// here with a key the verifier does not hold, which a check would send to Accounts. Every
    /// later rule still applies, and a token that is not a live session token is not held.
    @Test func aTokenIssuedThroughThisGatewayIsHeldWithoutASignatureCheck() async throws {
        let rotated = SessionTokens(keys: try SessionKeySet(current: try SessionSigningKey.generate(id: "s2")))
        func issued(issuedAt: Date = Date()) async throws -> String {
            try await rotated.issue(
                userID: user.uuidString.lowercased(), sessionID: session.uuidString.lowercased(), appleSubject: "apple.1", now: issuedAt
            ).token
        }
        let unloaded = SessionVerifier(maximumStaleness: Self.staleness)
        let early = try await issued()
        unloaded.holdIssued(early)
        #expect(unloaded.cachedTokens == 0, "nothing is held before Accounts' keys are loaded")

        let verifier = loadedVerifier()
        let token = try await issued()
        #expect(await verifier.verdict(on: token) == .undecided, "checked, an unknown key goes to Accounts")
        let fresh = try await issued(issuedAt: Date().addingTimeInterval(-1))
        verifier.holdIssued(fresh)
        #expect(verifier.cachedTokens == 1)
        #expect(await verifier.verdict(on: fresh) == .valid(userId: user, appleId: "apple.1", sessionId: session))
        verifier.revoked(SessionRevoked(sessionId: session, userId: nil, revokedAt: Date()))
        #expect(await verifier.verdict(on: fresh) == .refused)

        for notHeld in [try await issued(issuedAt: Date().addingTimeInterval(-3600)), "not a token", "a.b.c"] {
            verifier.holdIssued(notHeld)
        }
        #expect(verifier.cachedTokens == 1, "an expired token or anything else is not held")
    }

    @Test func aStaleOrUnloadedViewDecidesNothing() async throws {
        let token = try await token()
        let unloaded = SessionVerifier(maximumStaleness: Self.staleness)
        #expect(await unloaded.verdict(on: token) == .undecided)
        let verifier = loadedVerifier()
        verifier.markSynced(at: .now - Self.staleness - .seconds(1))
        #expect(await verifier.verdict(on: token) == .undecided)
        verifier.markSynced()
        #expect(await verifier.verdict(on: token) != .undecided)
    }

    @Test func aListPastItsLimitDecidesNothing() async throws {
        let verifier = SessionVerifier(maximumStaleness: Self.staleness, revocationLimit: 1)
        verifier.useKeys([NamedPublicKey(keyId: "s1", publicKey: signing.publicKey.rawRepresentation.base64EncodedString())])
        let revoked = (0..<2).map { _ in SessionRevoked(sessionId: UUID(), userId: nil, revokedAt: Date()) }
        verifier.withRevocations { $0.load(.init(sequence: 1, sessions: revoked, users: [], tokenLifetimeSeconds: 900), leeway: 30) }
        verifier.markSynced()
        #expect(await verifier.verdict(on: try await token()) == .undecided)
    }

    @Test func revokedSessionsAndDeletedUsersAreRefused() async throws {
        let token = try await token(issuedAt: Date().addingTimeInterval(-10))
        let signedOut = loadedVerifier(sessions: [SessionRevoked(sessionId: session, userId: user, revokedAt: Date())])
        #expect(await signedOut.verdict(on: token) == .refused)
        let deleted = loadedVerifier(users: [UserSessionsRevoked(userId: user, revokedAt: Date())])
        #expect(await deleted.verdict(on: token) == .refused)
        // A revocation applied after the token was cached still refuses it.
        let verifier = loadedVerifier()
        #expect(await verifier.verdict(on: token) != .refused)
        verifier.revoked(SessionRevoked(sessionId: session, userId: nil, revokedAt: Date()))
        #expect(await verifier.verdict(on: token) == .refused)
    }

    @Test func eventsApplyInOrderAndGapsAskForACatchUp() {
        var list = RevocationList(retention: 930)
        #expect(list.order(of: 1) == .gap)  // not loaded
        list.load(.init(sequence: 7, sessions: [], users: [], tokenLifetimeSeconds: 900), leeway: 30)
        #expect(list.order(of: 7) == .seen)
        #expect(list.order(of: 8) == .next)
        #expect(list.order(of: 9) == .gap)
        list.advance(to: 8)
        #expect(list.order(of: 9) == .next)
    }

    /// The acceptances the terms enforcement holds: kept only from answers read at a sequence the
    /// list has not passed, dropped by the user's session revocation or deletion and by a reload,
    /// trusted only while the view is fresh.
    @Test func heldAcceptancesFollowTheEvents() {
        var list = RevocationList(retention: 930)
        let unloaded = list.rememberAcceptedTerms("1.0", of: user, asOf: 5)
        #expect(!unloaded)  // not loaded
        list.load(.init(sequence: 7, sessions: [], users: [], tokenLifetimeSeconds: 900), leeway: 30)
        let behind = list.rememberAcceptedTerms("1.0", of: user, asOf: 6)
        #expect(!behind)  // read before events already applied
        let current = list.rememberAcceptedTerms("1.0", of: user, asOf: 7)
        #expect(current && list.acceptedTerms[user] == "1.0")
        list.revoke(SessionRevoked(sessionId: UUID(), userId: UUID(), revokedAt: Date()))
        #expect(list.acceptedTerms[user] == "1.0")  // someone else's sign-out
        list.revoke(SessionRevoked(sessionId: UUID(), userId: user, revokedAt: Date()))
        #expect(list.acceptedTerms[user] == nil)  // a decline ends every session of the user
        list.rememberAcceptedTerms("2.0", of: user, asOf: 9)
        list.declined(TermsDeclined(userId: user, declinedAt: Date()))
        #expect(list.acceptedTerms[user] == nil)  // declined with no session open
        list.rememberAcceptedTerms("2.0", of: user, asOf: 9)
        list.revoke(UserSessionsRevoked(userId: user, revokedAt: Date()))
        #expect(list.acceptedTerms[user] == nil)
        list.rememberAcceptedTerms("2.0", of: user, asOf: 9)
        list.load(.init(sequence: 12, sessions: [], users: [], tokenLifetimeSeconds: 900), leeway: 30)
        #expect(list.acceptedTerms.isEmpty)

        let verifier = loadedVerifier()
        verifier.rememberAcceptedTerms("1.0", of: user, asOf: 7)
        #expect(verifier.acceptedTerms(of: user) == "1.0")
        verifier.markSynced(at: .now - Self.staleness - .seconds(1))
        #expect(verifier.acceptedTerms(of: user) == nil, "a stale view holds nothing")
    }

    /// The rule the gateway enforces and Audit reports (``LegalVersionSummary/needsAcceptance``).
    @Test func needsAcceptanceRule() {
        let start = Date(timeIntervalSince1970: 1_800_000_000)
        func version(_ name: String, _ day: Double, material: Bool = true) -> LegalVersionSummary {
            let at = start.addingTimeInterval(day * 86_400)
            return LegalVersionSummary(
                type: .termsOfService, version: name, lastUpdated: at, publishedAt: at, effectiveAt: at, digest: name, material: material)
        }
        let versions = [version("1", 0), version("1.1", 1, material: false), version("2", 2), version("3", 10)]
        let rule = { (accepted: String?, day: Double) in
            LegalVersionSummary.needsAcceptance(afterAccepting: accepted, versions: versions, at: start.addingTimeInterval(day * 86_400))
        }
        #expect(rule(nil, 1) && rule("unknown", 1))
        #expect(!rule("1", 1.5), "an editorial version changes nothing")
        #expect(rule("1", 2) && rule("1.1", 2), "a material version took effect")
        #expect(!rule("2", 5), "a version published for later does not count before its day")
        #expect(rule("2", 10) && !rule("3", 10))
    }

    @Test func entriesAreForgottenOnceNoTokenCanOutliveThem() {
        var list = RevocationList(retention: 930)
        let now = Date()
        list.load(
            .init(
                sequence: 1, sessions: [SessionRevoked(sessionId: session, userId: nil, revokedAt: now.addingTimeInterval(-931))],
                users: [UserSessionsRevoked(userId: user, revokedAt: now.addingTimeInterval(-10))], tokenLifetimeSeconds: 900),
            leeway: 30)
        #expect(list.count == 2)
        list.prune(now: now)
        #expect(list.count == 1)
        #expect(list.refuses(session: UUID(), user: user, issuedAt: now.addingTimeInterval(-20)))
        #expect(!list.refuses(session: UUID(), user: user, issuedAt: now))
    }
}
