import Hummingbird

/// The per-address half of a rate limit (``RateLimits``) as a group's middleware: taken before the
/// credential is even looked at, so a request with a bad token spends its sender's address
/// budget. The per-person half stays in the handler, keyed by the identity the credential proved.
package struct AddressRateLimitMiddleware: RouterMiddleware {
    package typealias Context = GatewayContext

    /// Which per-address limit the group's routes take.
    package enum Limit: Sendable {
        /// Sign-ins and refreshes (`GATEWAY_RATE_LIMIT_SIGN_IN_PER_IP`).
        case signIn
        /// Acceptance writes (`GATEWAY_RATE_LIMIT_ACCEPT_PER_IP`).
        case accept
    }

    let limits: RateLimits
    let limit: Limit

    package init(limits: RateLimits, limit: Limit) {
        self.limits = limits
        self.limit = limit
    }

    package func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        switch limit {
        case .signIn: try limits.signIn(from: context)
        case .accept: try limits.accept(from: context)
        }
        return try await next(request, context)
    }
}
