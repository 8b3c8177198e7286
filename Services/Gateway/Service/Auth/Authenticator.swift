import Bus
import Contracts
import Foundation
import Hummingbird
import Identity
import Logging

/// Reads `Authorization: Bearer <token>` and finds out who the caller is.
///
/// The token's header says which kind it is before anything is trusted: `EdDSA` is our session
/// token, checked here by ``SessionVerifier`` (signature with Accounts' public keys, expiry, and
/// the revocations Accounts' events bring) and by Accounts (`accounts.verify_session`) whenever the
/// verifier cannot decide (its view is stale, the key is new, the token predates its account);
/// `RS256` is an Apple identity token, verified here against Apple's keys when
/// `GATEWAY_APPLE_BUNDLE_ID` is set; any other algorithm goes to the route module's
/// ``TokenKind`` that claims it (the Supabase module's `anon` key is HS256). Anything else, or a
/// token that fails its check, is `unauthenticated` (401); no token is ever logged.
package struct Authenticator: Sendable {
    let services: ServiceClients
    package let sessions: SessionVerifier
    let apple: AppleIdentityVerifier?
    /// The route modules' token kinds, by JWS algorithm.
    let tokenKinds: [String: any TokenKind]
    /// The enforcement of the terms for routes that need them accepted.
    package let terms: TermsGate

    init(
        services: ServiceClients, sessions: SessionVerifier, apple: AppleIdentityVerifier?, tokenKinds: [any TokenKind] = [],
        terms: TermsGate
    ) {
        precondition(tokenKinds.allSatisfy { !["EdDSA", "RS256"].contains($0.algorithm) }, "EdDSA and RS256 are the core's own tokens")
        self.services = services
        self.sessions = sessions
        self.apple = apple
        self.tokenKinds = Dictionary(uniqueKeysWithValues: tokenKinds.map { ($0.algorithm, $0) })
        self.terms = terms
    }

    /// Who the request's `Authorization` header says the caller is: the one place a request's
    /// credential is read (``AuthenticationMiddleware`` calls it once per request of an
    /// authenticated group). Never throws: a refusal is kept for the route to answer in its
    /// door's error body and in its own order (an `apikey` or a path checked first).
    func authenticate(_ request: Request, context: GatewayContext) async -> Authentication {
        guard let header = request.headers[.authorization] else { return .anonymous }
        guard let token = Self.bearerToken(header) else { return .malformed }
        do {
            return .verified(try await credential(token: token, context: context), token: token)
        } catch {
            return .refused(error)
        }
    }

    /// The token of an `Authorization: Bearer <token>` value, without the spaces and tabs HTTP
    /// allows around it (RFC 9110 §5.6.3); nil for another scheme or an empty token. The scheme
    /// in any case (RFC 9110 §11.1). On the header's UTF-8: counting and lower-casing its
    /// characters walked the whole token by grapheme, 1.5% of the gateway's CPU per acceptance.
    static func bearerToken(_ header: String) -> String? {
        let utf8 = header.utf8
        var index = utf8.startIndex
        for expected in "bearer ".utf8 {
            guard index != utf8.endIndex else { return nil }
            let byte = utf8[index]
            guard byte == expected || (expected != UInt8(ascii: " ") && byte == expected - 0x20) else { return nil }
            index = utf8.index(after: index)
        }
        let token = trimmingOptionalWhitespace(header[index...])
        return token.isEmpty ? nil : token
    }

    /// `text` without the spaces and tabs HTTP allows around a field value (RFC 9110 §5.6.3).
    /// Foundation's `trimmingCharacters` bridged every token through `NSString`: 7% of the
    /// gateway's CPU under `deploy/bench-gateway`.
    static func trimmingOptionalWhitespace(_ text: Substring) -> String {
        let isContent: (UInt8) -> Bool = { $0 != UInt8(ascii: " ") && $0 != UInt8(ascii: "\t") }
        guard let first = text.utf8.firstIndex(where: isContent), let last = text.utf8.lastIndex(where: isContent) else { return "" }
        return String(text[first...last])
    }

    /// The credential of `token`, or the refusal: 401 (``SessionRefusal``, `unauthenticated`), or
    /// `unavailable` when what would decide cannot be asked.
    package func credential(token: String, context: GatewayContext) async throws -> Credential {
        // A session token verified here before needs no parsing (which was a tenth of the
        // gateway's CPU per acceptance): the cache knows it by its SHA-256, taken once here.
        let digest = TokenDigest(of: token)
        if let verdict = sessions.knownVerdict(digest) { return try await session(token, verdict, context: context) }
        // One parse serves the routing by `alg` and the session check.
        guard let jws = try? CompactJWS(parsing: token) else { throw SessionRefusal.signInRequired("the bearer token is malformed") }
        switch jws.algorithm {
        case "EdDSA":
            return try await session(token, await sessions.verdict(on: jws, digest: digest), context: context)
        case "RS256":
            guard let apple else { throw BusError(.unauthenticated, "Apple identity tokens are not accepted here; sign in first") }
            do {
                return .apple(appleId: try await apple.verify(token).subject)
            } catch IdentityError.keySetUnavailable {
                throw BusError(.unavailable, "Apple's keys cannot be loaded")
            } catch {
                throw BusError(.unauthenticated, "the Apple identity token is not valid")
            }
        case let algorithm:
            guard let kind = tokenKinds[algorithm] else { throw BusError(.unauthenticated, "unsupported token type") }
            return try await kind.credential(for: token)
        }
    }

    /// The credential of session token `token` given the verifier's verdict; Accounts
    /// (`accounts.verify_session`) decides what the verifier may not.
    private func session(_ token: String, _ verdict: SessionVerifier.Verdict, context: GatewayContext) async throws -> Credential {
        switch verdict {
        case .valid(let userId, let appleId, let sessionId): return .session(userId: userId, appleId: appleId, sessionId: sessionId)
        case .expired: throw SessionRefusal.expired()
        case .refused: throw SessionRefusal.signInRequired("the session token is not valid: sign in again")
        case .undecided: break
        }
        do {
            let session = try await services.call(
                .accounts, AccountsVerifySession.self, .init(sessionToken: token), principal: .service("gateway"), context: context)
            if let userId = session.userId { sessions.bound(token, to: userId, sessionId: session.sessionId) }
            return .session(userId: session.userId, appleId: session.appleId, sessionId: session.sessionId)
        } catch let error as BusError where error.code == .unauthenticated || error.code == .invalidArgument {
            if error.details?[SessionRefusal.reasonKey] == SessionRefusal.expiredReason { throw SessionRefusal.expired() }
            throw SessionRefusal.signInRequired("the session token is not valid: sign in again")
        }
    }

    /// The subject of an Apple identity token that verifies here (signature, issuer, audience,
    /// expiry), or nil: when it does not, or Apple tokens are not accepted here. For keying the
    /// per-person sign-in limit before Accounts is asked; Accounts still verifies it itself.
    func verifiedAppleId(_ token: String) async -> String? {
        guard let apple else { return nil }
        return try? await apple.verify(token).subject
    }
}
