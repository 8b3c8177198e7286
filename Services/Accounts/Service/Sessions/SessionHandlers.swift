import Bus
import Contracts
import Foundation
import Identity
import Logging
import Metrics
import ServiceKit

/// Sign in with Apple and sessions: `accounts.sign_in_with_apple`, `refresh_session`,
/// `sign_out`, `verify_session`. Sign-in, refresh and verification run before (or instead of) a
/// user principal, so they are for the gateway (service or anonymous principal) and operators.
/// No token, refresh token or key reaches a log or an error message.
struct SessionHandlers: Sendable {
    let store: AccountsStore
    let signUp: SignUp
    let apple: AppleIdentityVerifier
    let tokens: SessionTokens
    /// Seconds a session lasts (its refresh token's life, renewed by each refresh).
    let lifetimeSeconds: Int
    /// Apple's token endpoints; nil when not configured (authorization codes are then not exchanged).
    let appleTokens: AppleTokenSettings?
    /// Where sign-outs are announced (`session.revoked`) to gateways that verify tokens themselves.
    let outbox: Outbox
    static let exchanged = Counter(label: "accounts_apple_code_exchanges_total", dimensions: [("outcome", "stored")])
    static let exchangeFailed = Counter(label: "accounts_apple_code_exchanges_total", dimensions: [("outcome", "failed")])
    /// Refresh tokens presented again after rotation (each revoked its session).
    static let reuseDetected = Counter(label: "accounts_refresh_token_reuse_total")

    func register(on server: RPCServer) {
        server.register(AccountsSignInWithApple.self) { request, context in
            try Self.gatewayOnly(context, "sign_in_with_apple")
            return try await signIn(request, logger: context.logger)
        }
        server.register(AccountsRefreshSession.self) { request, context in
            try Self.gatewayOnly(context, "refresh_session")
            return try await refresh(request.refreshToken, logger: context.logger)
        }
        server.register(AccountsSignOut.self) { request, context in
            try await signOut(request, context: context)
        }
        server.register(AccountsVerifySession.self) { request, context in
            try Self.gatewayOnly(context, "verify_session")
            return try await verify(request.sessionToken)
        }
        server.register(AccountsAppleAuthorizationCode.self) { request, context in
            try Self.gatewayOnly(context, "apple_authorization_code")
            return try await handOver(request, logger: context.logger)
        }
        server.register(AccountsSessionRevocations.self) { request, context in
            try Self.gatewayOnly(context, "session_revocations")
            let (sequence, sessions, users) = try await store.revocations(since: request.since)
            return .init(sequence: sequence, sessions: sessions, users: users, tokenLifetimeSeconds: Int(tokens.lifetime.rounded(.up)))
        }
    }

    /// Verifies the Apple token (nothing is written when it is refused), reads or describes the
    /// user as `get_or_create` would without eligibility fields, then opens a session.
    func signIn(_ request: AccountsSignInWithApple.Request, logger: Logger) async throws -> AccountsSignInWithApple.Reply {
        let claims: AppleIdentityClaims
        do {
            claims = try await apple.verify(request.identityToken, nonce: request.nonce)
        } catch let error as IdentityError {
            throw Self.refusal(error)
        }
        let user = try await signUp.getOrCreate(
            .init(
                appleId: claims.subject, email: request.email ?? claims.email, name: request.name,
                clientIP: request.clientIP, userAgent: request.userAgent))
        let refresh = RefreshToken.generate()
        let session = try await store.openSession(appleId: claims.subject, refreshHash: refresh.hash, lifetimeSeconds: lifetimeSeconds)
        let grant = try await issue(session, refresh: refresh)
        var stored: Bool?
        if let code = request.authorizationCode { stored = await storeAppleToken(code: code, appleId: claims.subject, logger: logger) }
        return .init(
            user: user, sessionId: grant.sessionId, sessionToken: grant.sessionToken,
            sessionExpiresAt: grant.sessionExpiresAt, refreshToken: grant.refreshToken, appleTokenStored: stored,
            accountId: grant.accountId)
    }

    /// Exchanges the authorization code at Apple and stores the refresh token sealed; false (logged
    /// and counted) when that fails: the sign-in stands, only a later revocation has nothing to revoke.
    func storeAppleToken(code: String, appleId: String, logger: Logger) async -> Bool {
        do {
            try await exchangeAndStore(code: code, appleId: appleId)
            return true
        } catch {
            // AppleTokenError, IdentityError and BusError carry no token material.
            logger.warning("apple authorization code exchange failed; the sign-in stands", metadata: ["error": "\(error)"])
            return false
        }
    }

    /// `accounts.apple_authorization_code`: a code handed over after the sign-in, exchanged for the
    /// Apple id of the open session; failures are the caller's errors here (nothing else to stand).
    func handOver(_ request: AccountsAppleAuthorizationCode.Request, logger: Logger) async throws -> AccountsAppleAuthorizationCode.Reply {
        guard !request.authorizationCode.isEmpty, request.authorizationCode.utf8.count <= 4096 else {
            throw BusError(.invalidArgument, "authorizationCode must be 1 to 4096 bytes")
        }
        guard let session = try await store.session(id: request.sessionId), session.revokedAt == nil, session.isOpen() else {
            throw BusError(.unauthenticated, "the session is not open (signed out, expired or unknown); sign in again")
        }
        do {
            try await exchangeAndStore(code: request.authorizationCode, appleId: session.appleId, checkSubject: true)
        } catch AppleTokenError.refused(let status, let error) where (400..<500).contains(status) {
            logger.warning("apple refused a handed-over authorization code", metadata: ["status": "\(status)", "error": "\(error ?? "")"])
            throw BusError(
                .invalidArgument,
                "Apple refused the authorization code (\(error ?? "status \(status)")): it is single-use and lasts five minutes; sign in with Apple again for a new one"
            )
        } catch let error as BusError {
            throw error
        } catch {
            logger.warning("apple authorization code exchange failed", metadata: ["error": "\(error)"])
            throw BusError(.unavailable, "Apple's token endpoint could not be reached; try again")
        }
        return .init(appleTokenStored: true)
    }

    /// Exchanges `code` at Apple and stores the refresh token for `appleId`, sealed; counted.
    /// With `checkSubject` (a code that came apart from its identity token), Apple's `id_token` in
    /// the reply must verify and name `appleId`; otherwise the grant just obtained is revoked at
    /// once and nothing is stored, so a deletion never revokes someone else's grant.
    func exchangeAndStore(code: String, appleId: String, checkSubject: Bool = false) async throws {
        guard let apple = appleTokens else {
            Self.exchangeFailed.increment()
            throw BusError(.unavailable, "authorization codes are not exchanged here: Apple's token endpoints are not configured (ACCOUNTS_APPLE_*)")
        }
        do {
            let grant = try await apple.client.exchange(code: code)
            if checkSubject { try await requireSubject(of: grant, is: appleId, client: apple.client) }
            try await store.storeAppleToken(appleId: appleId) { id in
                try apple.box.seal(Data(grant.refreshToken.utf8), context: id.uuidString.lowercased())
            }
            Self.exchanged.increment()
        } catch {
            Self.exchangeFailed.increment()
            throw error
        }
    }

    /// Refuses (`invalid_argument`) a grant whose `id_token` does not verify or names another
    /// Apple id, after revoking it (best effort: an unused grant of ours, better gone).
    private func requireSubject(of grant: AppleTokenClient.Grant, is appleId: String, client: AppleTokenClient) async throws {
        var subject: String?
        if let idToken = grant.idToken {
            do {
                subject = try await apple.verify(idToken).subject
            } catch IdentityError.keySetUnavailable {
                try? await client.revoke(refreshToken: grant.refreshToken)
                throw BusError(.unavailable, "Apple's signing keys could not be loaded; try again")
            } catch {
                subject = nil
            }
        }
        guard subject == appleId else {
            try? await client.revoke(refreshToken: grant.refreshToken)
            throw BusError(.invalidArgument, "the authorization code is not from this session's Apple ID sign-in; send the code of the same sign-in")
        }
    }

    /// Rotates the refresh token: the presented one stops working in the same transaction.
    ///
    /// A token the session already rotated away from means two parties hold the family (a thief
    /// and the owner; which is which cannot be told), so the whole session is revoked at once
    /// (RFC 9700 §4.14.2): its refresh token and, through `session.revoked`, its access tokens
    /// at every gateway. There is no grace period: a retry of a refresh whose reply was lost
    /// signs the user out, which costs one Sign in with Apple; a grace would let a thief who
    /// refreshed first keep the family when the owner's refresh follows within it.
    func refresh(_ token: String, logger: Logger) async throws -> SessionGrant {
        let next = RefreshToken.generate()
        switch try await store.rotate(refreshHash: RefreshToken.hash(of: token), to: next.hash, lifetimeSeconds: lifetimeSeconds) {
        case .rotated(let session):
            return try await issue(session, refresh: next)
        case .reused(let sessionId):
            let revoked = try await store.revokeSession(sessionId, outbox: outbox)
            outbox.committed()
            Self.reuseDetected.increment()
            // A security event: the session and user, never a token.
            logger.warning(
                "security: refresh token reused after rotation; session revoked",
                metadata: [
                    "event": "refresh_token_reuse", "session_id": "\(sessionId.uuidString.lowercased())",
                    "user_id": "\(revoked?.userId.map { $0.uuidString.lowercased() } ?? "none")",
                ])
            throw BusError(.unauthenticated, "the refresh token is unknown, already used, revoked or expired; sign in again")
        case .refused:
            throw BusError(.unauthenticated, "the refresh token is unknown, already used, revoked or expired; sign in again")
        }
    }

    func signOut(_ request: AccountsSignOut.Request, context: BusRequestContext) async throws -> AccountsSignOut.Reply {
        let found: StoredSession?
        switch (request.refreshToken, request.sessionId) {
        case (let token?, nil): found = try await store.session(refreshHash: RefreshToken.hash(of: token))
        case (nil, let id?): found = try await store.session(id: id)
        default: throw BusError(.invalidArgument, "give either refreshToken or sessionId")
        }
        guard let found else { throw BusError(.notFound, "no such session") }
        // The refresh token itself authorises ending its session; by id, the bus's rule (a
        // session not yet bound to an account belongs to no user principal).
        if context.principal.kind == .anonymous {
            guard request.refreshToken != nil else { throw BusError(.unauthenticated, "ending a session by id needs a signed-in principal") }
        } else if case .user(let id) = try context.actingFor, id != found.userId {
            throw BusError(.forbidden, "a user may only end their own sessions")
        }
        switch request.scope ?? .local {
        case .local:
            guard let revoked = try await store.revokeSession(found.id, outbox: outbox), let at = revoked.revokedAt else {
                throw BusError(.notFound, "no such session")
            }
            outbox.committed()
            return .init(sessionId: revoked.id, revokedAt: at)
        case .global, .others:
            // A session already ended cannot speak for the others (Supabase Auth answers 401 too).
            guard found.isOpen() else { throw BusError(.unauthenticated, "the session was signed out or has expired") }
            let except = request.scope == .others ? found.id : nil
            let ended = try await store.revokeAllSessions(of: found.userId, appleId: found.appleId, except: except, outbox: outbox)
            outbox.committed()
            return .init(sessionId: found.id, revokedAt: ended.first { $0.sessionId == found.id }?.revokedAt, ended: ended)
        }
    }

    /// The token's signature and expiry, then the session row: open, and (through the cascade)
    /// gone with a deleted account.
    func verify(_ token: String) async throws -> AccountsVerifySession.Reply {
        let claims: SessionClaims
        do {
            claims = try await tokens.verify(token)
        } catch IdentityError.expired {
            throw BusError(.unauthenticated, "token refused: the token has expired; refresh it", details: [Self.reasonKey: "session_expired"])
        } catch let error as IdentityError {
            throw Self.refusal(error)
        }
        guard let id = MessageID.parse(claims.sessionID), let found = try await store.session(id: id) else {
            throw BusError(.unauthenticated, "the session no longer exists (signed out or account deleted)")
        }
        let session = try await store.bindPending(found)
        guard session.revokedAt == nil else { throw BusError(.unauthenticated, "the session was signed out") }
        guard session.isOpen() else { throw BusError(.unauthenticated, "the session has expired; sign in again") }
        return .init(
            userId: session.userId, appleId: session.appleId, sessionId: session.id, expiresAt: claims.expiresAt, accountId: session.accountID)
    }

    /// A session token for `session` (subject: the user id, or `apple:<sub>` before the account
    /// exists), carrying the Apple subject so the gateway can verify it without asking us.
    private func issue(_ session: StoredSession, refresh: RefreshToken) async throws -> SessionGrant {
        let subject = session.userId.map { $0.uuidString.lowercased() } ?? "apple:\(session.appleId)"
        let (token, claims) = try await tokens.issue(userID: subject, sessionID: session.id.uuidString.lowercased(), appleSubject: session.appleId)
        return SessionGrant(
            sessionId: session.id, sessionToken: token, sessionExpiresAt: claims.expiresAt, refreshToken: refresh.token,
            userId: session.userId, accountId: session.accountID, appleId: session.appleId)
    }

    /// The `details` key of `verify_session`'s refusal of an expired token (`session_expired`).
    static let reasonKey = "reason"

    static func gatewayOnly(_ context: BusRequestContext, _ method: String) throws {
        guard context.principal.kind != .user else { throw BusError(.forbidden, "\(method) is called by the gateway, not by a signed-in user") }
        try context.requireUserAccess()
    }

    /// `unauthenticated` with a fixed description (``IdentityError`` holds no token material);
    /// `unavailable` when Apple's keys could not be loaded.
    static func refusal(_ error: IdentityError) -> BusError {
        let reason: String
        switch error {
        case .keySetUnavailable: return BusError(.unavailable, "Apple's signing keys could not be loaded; try again")
        case .malformed, .tokenTooLarge: reason = "the token is malformed"
        case .unsupportedAlgorithm: reason = "the token's algorithm is not accepted"
        case .badSignature, .unknownKey: reason = "the token's signature does not verify"
        case .expired: reason = "the token has expired"
        case .notYetValid: reason = "the token is not valid yet"
        case .wrongIssuer: reason = "the token was not issued by the expected issuer"
        case .wrongAudience: reason = "the token is not meant for this app"
        case .nonceMismatch: reason = "the token's nonce does not match"
        case .invalidKey, .decryptionFailed: reason = "the token could not be verified"
        }
        return BusError(.unauthenticated, "token refused: \(reason)")
    }
}
