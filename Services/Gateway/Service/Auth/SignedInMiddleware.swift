import Bus
import Foundation
import Hummingbird

/// The guard of the routes that act for a signed-in user (``RouteFamily/signedIn(by:termsAccepted:)``):
/// the request's ``Authentication`` must be the session token of an account (else 401, or 403 for
/// a session whose account does not exist yet), and when `termsAccepted`, of a user who accepted
/// the terms in effect (else `403 terms_not_accepted`, ``TermsGate``). The handler reads who it is
/// from ``GatewayContext/signedIn()``.
///
/// Routes that must stay open to a user who has not accepted the terms (reading the terms,
/// accepting or declining them, signing out, deleting the account or a document, reading,
/// exporting or correcting one's own data) are in a group with `termsAccepted: false`.
package struct SignedInMiddleware: RouterMiddleware {
    package typealias Context = GatewayContext
    let terms: TermsGate
    let termsAccepted: Bool

    package func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let caller = try context.authentication().signedInCaller()
        if termsAccepted { try await terms.require(caller.userId, context: context) }
        var context = context
        context.signedInCaller = caller
        return try await next(request, context)
    }
}

/// Who a request signed in as, once ``SignedInMiddleware`` let it through.
package struct SignedInCaller: Sendable, Equatable {
    package let userId: UUID
    let appleId: String
    let sessionId: UUID
}

extension GatewayContext {
    /// The caller ``SignedInMiddleware`` let through. Only routes in a signed-in group call this; one
    /// registered outside such a group is a programming error, answered `internal` (500).
    package func signedIn() throws -> SignedInCaller {
        guard let signedInCaller else { throw BusError(.internal, "the route is not in a signed-in group") }
        return signedInCaller
    }
}
