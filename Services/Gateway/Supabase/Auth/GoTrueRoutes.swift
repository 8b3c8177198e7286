import Bus
import Contracts
import Foundation
import GatewayService
import HTTPTypes
import Hummingbird
import Identity

/// Supabase Auth (GoTrue) under `/auth/v1`, so an app built on supabase-swift, supabase-js or
/// supabase-py signs in unchanged: `signInWithIdToken(provider: .apple, idToken:, nonce:)`, the
/// refresh-token grant, `signOut(scope:)` and `getUser()`. A translation of the native session
/// routes (`/api/auth/…`): the same ``SessionFlows``, so the same account, sessions, rotation,
/// revocation and rate limits, whichever door a user comes in by.
///
/// Every request carries the `apikey` header (the anon key) as Supabase's gateway demands; errors
/// are GoTrue's bodies (``GoTrueError``). These routes stay open to users who have not confirmed
/// eligibility or accepted the terms: they are how such a user gets a session at all.
struct GoTrueRoutes {
    let services: ServiceClients
    let authenticator: Authenticator
    let flows: SessionFlows
    let limits: RateLimits
    /// The anon key the `apikey` header must be; nil: none is set, any `apikey` passes.
    let anonymousKey: AnonymousKey?
    let maxBodyBytes: Int

    struct IDTokenBody: Decodable {
        let provider: String?
        let id_token: String?
        let nonce: String?
    }

    struct RefreshBody: Decodable { let refresh_token: String? }

    /// The headers every Supabase Auth request carries: the anon key, and the API version that
    /// picks GoTrue's error body.
    static let headerDocs: [RouteDocs.Parameter] = [("apikey", RouteDocs.text), ("X-Supabase-Api-Version", RouteDocs.text)]

    /// Where the family's routes are (its router group's path).
    static let prefix = "/auth/v1"

    /// Every route is behind the family's ``GoTrueGate``: the `apikey` checked first, and every error
    /// in GoTrue's body (the versioned one when the client asks for it). The token grants then take
    /// the per-address sign-in limit, as the native door's do; logout and the user read the bearer.
    func register(on family: RouteFamily) {
        let gated = family.group(GoTrueGate(anonymousKey: anonymousKey))
        gated.group(AddressRateLimitMiddleware(limits: limits, limit: .signIn)).add(
            .post, "/token", "Supabase Auth: grant_type=id_token (Sign in with Apple) or refresh_token (rotation) → session.",
            public: true,
            docs: RouteDocs(
                query: [("grant_type", RouteDocs.oneOf(["id_token", "refresh_token"]))], headers: Self.headerDocs, rateLimited: true)
        ) { request, context in
            switch request.uri.queryParameters.get("grant_type") {
            case "id_token": return try await signIn(request, context)
            case "refresh_token": return try await refresh(request, context)
            default: throw GoTrueError(.badRequest, "unsupported_grant_type", "grant_type must be id_token or refresh_token")
            }
        }
        let authenticated = gated.authenticated(by: authenticator)
        authenticated.add(
            .post, "/logout",
            "Supabase Auth: end the bearer's session (scope local), all the user's (global, the default) or all others.", public: true,
            docs: RouteDocs(
                query: [("scope", RouteDocs.oneOf(["global", "local", "others"]))], headers: Self.headerDocs, body: .json(required: false),
                answer: .noContent)
        ) { request, context in
            try await logout(request, context)
        }
        authenticated.add(.get, "/user", "Supabase Auth: the signed-in user.", public: false, docs: RouteDocs(headers: Self.headerDocs)) {
            request, context in
            try await user(request, context)
        }
    }

    /// `grant_type=id_token`: Apple's identity token, with the app's raw nonce when it used one
    /// (the token's `nonce` must be its SHA-256 hex, as Apple writes it).
    private func signIn(_ request: Request, _ context: GatewayContext) async throws -> Response {
        let body = try await JSONBodies.decode(IDTokenBody.self, from: request, limit: maxBodyBytes, decoder: JSONDecoder())
        guard let idToken = body.id_token, !idToken.isEmpty else { throw GoTrueError(.badRequest, "validation_failed", "id_token is required") }
        guard body.provider == "apple" || body.provider == "https://appleid.apple.com" else {
            throw GoTrueError(.badRequest, "validation_failed", "provider must be apple: the one identity provider enabled here")
        }
        // As GoTrue: a nonce on one side only is refused (Accounts then checks the pair).
        guard (body.nonce?.isEmpty ?? true) == (Self.tokenNonce(idToken) == nil) else {
            throw GoTrueError(.badRequest, "validation_failed", "Passed nonce and nonce in id_token should either both exist or not.")
        }
        let reply: AccountsSignInWithApple.Reply
        do {
            reply = try await flows.signIn(.init(identityToken: idToken, nonce: body.nonce), request, context: context)
        } catch let error as BusError where error.code == .unauthenticated {
            // GoTrue answers a refused ID token (signature, audience, expiry, nonce) with 400.
            let nonce = error.message.contains("nonce")
            throw GoTrueError(.badRequest, "validation_failed", nonce ? "Nonces mismatch: \(error.message)" : "Bad ID token: \(error.message)")
        }
        guard let accountId = reply.accountId ?? reply.user.id else { throw BusError(.unavailable, "Accounts did not name the account; try again") }
        let user = GoTrueUser(accountId: accountId, appleId: reply.user.appleId, user: reply.user)
        return try JSONBodies.response(
            GoTrueSession(token: reply.sessionToken, expiresAt: reply.sessionExpiresAt, refreshToken: reply.refreshToken, user: user))
    }

    /// `grant_type=refresh_token`: rotation, as `/api/auth/refresh`.
    private func refresh(_ request: Request, _ context: GatewayContext) async throws -> Response {
        let body = try await JSONBodies.decode(RefreshBody.self, from: request, limit: maxBodyBytes, decoder: JSONDecoder())
        guard let token = body.refresh_token, !token.isEmpty else { throw GoTrueError(.badRequest, "validation_failed", "refresh_token is required") }
        let grant: SessionGrant
        do {
            grant = try await flows.refresh(token, context: context)
        } catch let error as BusError where error.code == .unauthenticated {
            throw GoTrueError(.badRequest, "refresh_token_not_found", "Invalid Refresh Token: \(error.message)")
        }
        guard let accountId = grant.accountId, let appleId = grant.appleId else {
            throw BusError(.unavailable, "Accounts did not name the account; try again")
        }
        let account = try await grant.userId.asyncMap { try await accountUser($0, context) }
        let user = GoTrueUser(accountId: accountId, appleId: appleId, user: account)
        return try JSONBodies.response(
            GoTrueSession(token: grant.sessionToken, expiresAt: grant.sessionExpiresAt, refreshToken: grant.refreshToken, user: user))
    }

    /// `POST /logout?scope=global|local|others` with the session's access token: 204.
    private func logout(_ request: Request, _ context: GatewayContext) async throws -> Response {
        let scopeText = request.uri.queryParameters.get("scope") ?? "global"
        guard let scope = AccountsSignOut.Scope(rawValue: scopeText) else {
            throw GoTrueError(.badRequest, "validation_failed", "scope must be global, local or others")
        }
        let (sessionId, _, _) = try session(context)
        do {
            _ = try await flows.signOut(.init(sessionId: sessionId, scope: scope), context: context)
        } catch let error as BusError where error.code == .unauthenticated || error.code == .notFound {
            throw GoTrueError(.notFound, "session_not_found", "Session not found: \(error.message)")
        }
        return Response(status: .noContent)
    }

    /// `GET /user`: the account (or, before eligibility, the user as far as the session knows it).
    private func user(_ request: Request, _ context: GatewayContext) async throws -> Response {
        let (_, credential, token) = try session(context)
        guard case .session(let userId, let appleId, _) = credential else { throw GoTrueError(.forbidden, "bad_jwt", "a session token is required") }
        if let userId {
            return try JSONBodies.response(GoTrueUser(accountId: userId, appleId: appleId, user: try await accountUser(userId, context)))
        }
        // No account yet: Accounts names the id it will get.
        let verified = try await services.call(
            .accounts, AccountsVerifySession.self, .init(sessionToken: token), principal: .service("gateway"), context: context)
        guard let accountId = verified.accountId else { throw BusError(.unavailable, "Accounts did not name the account; try again") }
        return try JSONBodies.response(GoTrueUser(accountId: accountId, appleId: appleId, user: nil))
    }

    /// The bearer's session (a session token, not the anon key or an Apple token) and its token, or
    /// GoTrue's 401/403.
    private func session(_ context: GatewayContext) throws -> (sessionId: UUID, credential: Credential, token: String) {
        switch try context.authentication() {
        case .anonymous, .malformed:
            throw GoTrueError(.unauthorized, "no_authorization", "This endpoint requires a Bearer token")
        case .refused(let error as BusError) where error.code == .unauthenticated:
            throw GoTrueError(.forbidden, "session_not_found", "Session not found: \(error.message)")
        case .refused(let error):
            throw error
        case .verified(let credential, let token):
            guard case .session(_, _, let sessionId) = credential else {
                throw GoTrueError(.forbidden, "bad_jwt", "invalid JWT: a session's access token is required, not an API key")
            }
            return (sessionId, credential, token)
        }
    }

    /// The `nonce` claim of a JWT, read without verifying it (Accounts verifies the token).
    static func tokenNonce(_ token: String) -> String? {
        struct Claims: Decodable { let nonce: String? }
        guard let jws = try? CompactJWS(parsing: token), let claims = try? JSONDecoder().decode(Claims.self, from: jws.payload) else { return nil }
        return claims.nonce.flatMap { $0.isEmpty ? nil : $0 }
    }

    private func accountUser(_ userId: UUID, _ context: GatewayContext) async throws -> AccountUser {
        try await services.call(.accounts, AccountsGet.self, .init(userId: userId), principal: Credential.principal(for: userId), context: context)
    }
}

extension Optional {
    /// `map` with an async transform.
    fileprivate func asyncMap<T>(_ transform: (Wrapped) async throws -> T) async rethrows -> T? {
        switch self {
        case .some(let value): try await transform(value)
        case .none: nil
        }
    }
}
