import Bus
import Foundation
import Hummingbird

/// The middleware of the routes that act for a signed-in user: the request must carry the session
/// token of an account (else 401, or 403 for a session whose account does not exist yet), and
/// when `termsAccepted`, of a user who accepted the terms in effect (else `403
/// terms_not_accepted`, ``TermsGate``). The handler reads who it is from
/// ``GatewayContext/signedIn()``.
///
/// Routes that must stay open to a user who has not accepted the terms (reading the terms,
/// accepting or declining them, signing out, deleting the account or a document, reading,
/// exporting or correcting one's own data) are in a group with `termsAccepted: false`.
struct SignedInMiddleware: RouterMiddleware {
    typealias Context = GatewayContext
    let authenticator: Authenticator
    let termsAccepted: Bool

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let session = try await authenticator.requireSession(request, context: context)
        if termsAccepted { try await authenticator.terms.require(session.userId, context: context) }
        var context = context
        context.signedInCaller = SignedInCaller(userId: session.userId, appleId: session.appleId, sessionId: session.sessionId)
        return try await next(request, context)
    }
}

/// Who a request signed in as, once ``SignedInMiddleware`` verified it.
struct SignedInCaller: Sendable, Equatable {
    let userId: UUID
    let appleId: String
    let sessionId: UUID
}

extension GatewayContext {
    /// The caller ``SignedInMiddleware`` verified. Only routes in a signed-in group call this; one
    /// registered outside such a group is a programming error, answered `internal` (500).
    func signedIn() throws -> SignedInCaller {
        guard let signedInCaller else { throw BusError(.internal, "the route is not in a signed-in group") }
        return signedInCaller
    }
}
