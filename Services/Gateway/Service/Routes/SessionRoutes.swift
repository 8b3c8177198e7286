import Bus
import Contracts
import Foundation
import Hummingbird

/// Sign in with Apple, refresh and sign out (`/api/auth/…`): the native door onto
/// ``SessionFlows``. Bodies and replies use the Contracts' camelCase names. Sign-in and refresh are
/// rate-limited per client address before anything else; a sign-in whose identity token verifies
/// here (`GATEWAY_APPLE_BUNDLE_ID` set) also per Apple id. A refresh token is opaque to the
/// gateway, so refresh is limited per address only.
package struct SessionRoutes {
    let services: ServiceClients
    let authenticator: Authenticator
    let flows: SessionFlows
    let limits: RateLimits
    let maxBodyBytes: Int

    struct SignInBody: Decodable {
        let identityToken: String
        let nonce: String?
        let email: String?
        let name: String?
        /// Apple's authorization code from the same sign-in: exchanged by Accounts for the refresh
        /// token that deleting the account revokes.
        let authorizationCode: String?
    }

    struct AuthorizationCodeBody: Decodable { let authorizationCode: String }

    struct RefreshBody: Decodable { let refreshToken: String }
    struct SignOutBody: Decodable { let refreshToken: String? }

    func register(on family: RouteFamily) {
        // Signing in and refreshing take the per-address sign-in limit before anything else.
        let signingIn = family.group(AddressRateLimitMiddleware(limits: limits, limit: .signIn))
        signingIn.add(
            .post, "/api/auth/apple", "Sign in with Apple: identity token → session token and refresh token.", public: true,
            docs: RouteDocs(rateLimited: true)
        ) { request, context in
            let body = try await JSONBodies.decode(SignInBody.self, from: request, limit: maxBodyBytes)
            let reply = try await flows.signIn(
                .init(
                    identityToken: body.identityToken, nonce: body.nonce, email: body.email, name: body.name,
                    authorizationCode: body.authorizationCode),
                request, context: context)
            return try JSONBodies.response(reply)
        }
        // Handing over the code and signing out read the bearer session.
        let authenticated = family.authenticated(by: authenticator)
        authenticated.add(
            .post, "/api/auth/apple/authorization-code",
            "Hand over Apple's authorization code after signing in (clients whose sign-in cannot carry it).", public: false
        ) { request, context in
            guard case .session(_, _, let sessionId)? = try context.authentication().credential() else {
                throw SessionRefusal.signInRequired("send Authorization: Bearer <session token>")
            }
            let body = try await JSONBodies.decode(AuthorizationCodeBody.self, from: request, limit: maxBodyBytes)
            let reply = try await services.call(
                .accounts, AccountsAppleAuthorizationCode.self, .init(sessionId: sessionId, authorizationCode: body.authorizationCode),
                principal: .service("gateway"), context: context)
            return try JSONBodies.response(reply)
        }
        signingIn.add(
            .post, "/api/auth/refresh", "Exchange a refresh token for a new session token and refresh token.", public: true,
            docs: RouteDocs(rateLimited: true)
        ) { request, context in
            let body = try await JSONBodies.decode(RefreshBody.self, from: request, limit: maxBodyBytes)
            do {
                return try JSONBodies.response(try await flows.refresh(body.refreshToken, context: context))
            } catch let error as BusError where error.code == .unauthenticated {
                throw SessionRefusal.signInRequired(error.message)
            }
        }
        authenticated.add(
            .post, "/api/auth/sign-out", "End a session: the bearer session's, or the one of a refresh token in the body.", public: true,
            docs: RouteDocs(body: .json(required: false))
        ) { request, context in
            let body =
                request.headers[.contentLength] == "0" ? nil : try? await JSONBodies.decode(SignOutBody.self, from: request, limit: maxBodyBytes)
            let signOut: AccountsSignOut.Request
            if let refreshToken = body?.refreshToken {
                signOut = .init(refreshToken: refreshToken)
            } else if case .session(_, _, let sessionId)? = try context.authentication().credential() {
                signOut = .init(sessionId: sessionId)
            } else {
                throw BusError(.unauthenticated, "send the session token or {\"refreshToken\": …}")
            }
            return try JSONBodies.response(try await flows.signOut(signOut, context: context))
        }
    }
}
