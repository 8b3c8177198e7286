import Bus
import Contracts
import Foundation
import Hummingbird

/// Signing in with Apple, refreshing a session and signing out, written once for every door: the
/// native `/api/auth/…` routes (``SessionRoutes``) and a route module's (Supabase Auth's
/// `/auth/v1`). A door parses its own body and answers refusals in its own error format; what is
/// done and in which order is here: the per-person sign-in limit, the Accounts call, and the
/// session verifier told at once of a token issued or a session ended (other gateways learn it
/// from Accounts' events). The per-address limit is the door's router group
/// (``AddressRateLimitMiddleware``), taken before the body is read.
package struct SessionFlows: Sendable {
    let services: ServiceClients
    let authenticator: Authenticator
    let limits: RateLimits

    package init(services: ServiceClients, authenticator: Authenticator, limits: RateLimits) {
        self.services = services
        self.authenticator = authenticator
        self.limits = limits
    }

    /// Opens a session for Apple identity token `signIn.identityToken` (the client's address and
    /// user agent are the request's): `unauthenticated` for a token Accounts refuses, 429 past the
    /// per-person limit. The token is verified here only to key that limit (Accounts verifies it
    /// again), and only when the limit is on.
    package func signIn(
        _ signIn: AccountsSignInWithApple.Request, _ request: Request, context: GatewayContext
    ) async throws -> AccountsSignInWithApple.Reply {
        if limits.limitsSignInPerPerson, let appleId = await authenticator.verifiedAppleId(signIn.identityToken) {
            try limits.signIn(appleId: appleId)
        }
        var signIn = signIn
        signIn.clientIP = context.clientIP
        signIn.userAgent = request.headers[.userAgent]
        let reply = try await services.call(.accounts, AccountsSignInWithApple.self, signIn, principal: .service("gateway"), context: context)
        authenticator.sessions.holdIssued(reply.sessionToken)
        return reply
    }

    /// Rotates `refreshToken` into a new session token and refresh token; `unauthenticated` for a
    /// refresh token Accounts does not know (or one already used: its family is revoked).
    package func refresh(_ refreshToken: String, context: GatewayContext) async throws -> SessionGrant {
        let grant = try await services.call(
            .accounts, AccountsRefreshSession.self, .init(refreshToken: refreshToken), principal: .service("gateway"), context: context)
        authenticator.sessions.holdIssued(grant.sessionToken)
        return grant
    }

    /// Ends the sessions `signOut` names (one, by session or refresh token, or a user's by scope);
    /// they are refused here at once.
    package func signOut(_ signOut: AccountsSignOut.Request, context: GatewayContext) async throws -> AccountsSignOut.Reply {
        let out = try await services.call(.accounts, AccountsSignOut.self, signOut, principal: .service("gateway"), context: context)
        if let at = out.revokedAt { authenticator.sessions.revoked(SessionRevoked(sessionId: out.sessionId, userId: nil, revokedAt: at)) }
        for ended in out.ended ?? [] { authenticator.sessions.revoked(ended) }
        return out
    }
}
