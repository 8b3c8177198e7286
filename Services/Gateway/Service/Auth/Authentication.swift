import Bus
import Foundation
import Hummingbird

/// What a request's `Authorization` header says about its caller, resolved once per request by
/// ``AuthenticationMiddleware`` (HummingbirdAuth's shape: one authenticator puts the identity in
/// the context, guards and handlers read it). Each door answers the cases in its own error body
/// and order: the native routes with ``credential()``, a route module with its own codes.
package enum Authentication: Sendable {
    /// No `Authorization` header.
    case anonymous
    /// A header that is not `Bearer <token>` with a non-empty token.
    case malformed
    /// A token that verified, and the token itself (for the calls that must pass it on).
    case verified(Credential, token: String)
    /// A token that was checked and refused (401), or could not be checked (`unavailable`).
    case refused(any Error)

    /// The caller's credential; nil without an `Authorization` header; the refusal otherwise.
    package func credential() throws -> Credential? {
        switch self {
        case .anonymous: return nil
        case .malformed: throw SessionRefusal.signInRequired("use Authorization: Bearer <token>")
        case .verified(let credential, _): return credential
        case .refused(let error): throw error
        }
    }

    /// The account, Apple id and session of a session token bound to an account, or 401/403:
    /// what ``SignedInMiddleware`` lets through to the routes of a signed-in group.
    func signedInCaller() throws -> SignedInCaller {
        guard let credential = try credential() else {
            throw SessionRefusal.signInRequired("sign in: send Authorization: Bearer <session token>")
        }
        guard case .session(let userId, let appleId, let sessionId) = credential else {
            throw SessionRefusal.signInRequired("this route takes a session token")
        }
        guard let userId else { throw BusError(.forbidden, "confirm eligibility first: the account does not exist yet") }
        return SignedInCaller(userId: userId, appleId: appleId, sessionId: sessionId)
    }
}

/// The one place the gateway reads `Authorization`: puts ``Authentication`` in the context of
/// every route of an authenticated group (``RouteFamily/authenticated(by:)``). It never refuses;
/// the group's guards (``SignedInMiddleware``) and handlers decide what a refusal means there. A
/// group nested in another authenticated one does not resolve the header again.
package struct AuthenticationMiddleware: RouterMiddleware {
    package typealias Context = GatewayContext
    let authenticator: Authenticator

    package func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        guard context.resolvedAuthentication == nil else { return try await next(request, context) }
        var context = context
        context.resolvedAuthentication = await authenticator.authenticate(request, context: context)
        return try await next(request, context)
    }
}

extension GatewayContext {
    /// What ``AuthenticationMiddleware`` resolved. Only routes in an authenticated group call this;
    /// one registered outside such a group is a programming error, answered `internal` (500).
    package func authentication() throws -> Authentication {
        guard let resolvedAuthentication else { throw BusError(.internal, "the route is not in an authenticated group") }
        return resolvedAuthentication
    }
}
