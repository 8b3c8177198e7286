import Bus
import Contracts
import Foundation
import HTTPTypes
import Hummingbird
import Logging

/// The app's onboarding: read the terms, sign up (get or create the account), accept the terms.
/// These are seed 004's three routes, exactly as its Swift client calls them.
///
/// By default `POST /api/users` and `PUT /api/users/{id}/accept-tos` need credentials: a session
/// token, or an Apple identity token (when `GATEWAY_APPLE_BUNDLE_ID` is set), whose Apple id must
/// be the body's `apple_id` / whose account must be `{id}` (else 403). `GET /api/terms` is public,
/// like the terms themselves. With `GATEWAY_LEGACY_UNAUTHENTICATED_CLIENTS` on, a request without
/// an `Authorization` header is let through as the seed's client sends it (a header that is sent
/// is still checked): anyone can then act for any Apple id, which is why it is off by default and
/// logged at start and on every such request.
///
/// Acceptances go to Accounts in batches (``AcceptanceBatcher``): those that arrive together share
/// one bus call, one Audit group commit and one update of the users.
///
/// Both writes are rate-limited (``RateLimits``): per client address first, then per Apple id of
/// the verified credential (a legacy request without one counts against its address only).
package struct OnboardingRoutes {
    let services: ServiceClients
    let acceptances: AcceptanceBatcher
    let authenticator: Authenticator
    let limits: RateLimits
    let legacyClients: Bool
    let maxBodyBytes: Int

    struct SignUpBody: Decodable {
        let apple_id: String
        let email: String?
        let name: String?
        let state: String?
        let eligibility_certified: Bool?
        let tos_version: String?
    }

    struct AcceptBody: Decodable {
        let tos_version: String
    }

    /// Where the seed's account routes are.
    static let prefix = "/api/users"

    /// Registers the seed's two writes on its family (whose error body is `{"error": message}`). Signing up takes the
    /// per-address sign-in limit first; accepting checks the path's user id before its per-address limit, in the handler.
    /// `GET /api/terms` is registered on the same family with the other reads of the texts, by ``LegalRoutes``.
    func register(on family: RouteFamily) {
        family.group(AddressRateLimitMiddleware(limits: limits, limit: .signIn)).authenticated(by: authenticator).add(
            .post, Self.prefix, "Seed 004: get or create the user of an Apple id, with eligibility for a new one.", public: false,
            docs: RouteDocs(rateLimited: true)
        ) {
            request, context in
            try await getOrCreate(request, context)
        }
        family.authenticated(by: authenticator).add(
            .put, Self.prefix + "/:id/accept-tos", "Seed 004: accept the terms of service version in effect.", public: false,
            docs: RouteDocs(rateLimited: true)
        ) {
            request, context in
            try await acceptTerms(request, context)
        }
    }

    func getOrCreate(_ request: Request, _ context: GatewayContext) async throws -> Response {
        let credential = try context.authentication().credential()
        if credential == nil { try allowLegacy(context) }
        if let appleId = credential?.appleId { try limits.signIn(appleId: appleId) }
        let body = try await JSONBodies.decode(SignUpBody.self, from: request, limit: maxBodyBytes)
        guard !body.apple_id.isEmpty else { throw BusError(.invalidArgument, "apple_id is required") }
        if let credential, credential.appleId != body.apple_id {
            throw BusError(.forbidden, "you may only sign up your own Apple id")
        }
        let user = try await services.call(
            .accounts, AccountsGetOrCreate.self,
            .init(
                appleId: body.apple_id, email: body.email, name: body.name, state: body.state,
                eligibilityCertified: body.eligibility_certified, tosVersion: body.tos_version,
                clientIP: context.clientIP, userAgent: request.headers[.userAgent]),
            principal: .service("gateway"), context: context)
        return try JSONBodies.response(OnboardingUserJSON(user: user))
    }

    func acceptTerms(_ request: Request, _ context: GatewayContext) async throws -> Response {
        guard let id = MessageID.parse(context.pathParameter("id") ?? "") else {
            throw BusError(.invalidArgument, "the user id in the path is not a UUID")
        }
        try limits.accept(from: context)
        let credential = try context.authentication().credential()
        if credential == nil { try allowLegacy(context) }
        if let appleId = credential?.appleId { try limits.accept(appleId: appleId) }
        let body = try await JSONBodies.decode(AcceptBody.self, from: request, limit: maxBodyBytes)
        // The batch call acts as the gateway (a service that may act for users) for users checked here.
        switch credential {
        case .session(let userId, _, _):
            guard userId == id else { throw BusError(.forbidden, "you may only accept the terms for yourself") }
        case .apple(let appleId):
            let user = try await services.call(
                .accounts, AccountsGetOrCreate.self, .init(appleId: appleId), principal: .service("gateway"), context: context)
            guard user.id == id else { throw BusError(.forbidden, "you may only accept the terms for yourself") }
        case .apiKey:
            throw BusError(.forbidden, "an API key cannot accept terms: sign in")
        case nil:
            break  // a legacy client, let through above
        }
        let user = try await acceptances.accept(
            .init(
                request: .init(userId: id, tosVersion: body.tos_version, clientIP: context.clientIP, userAgent: request.headers[.userAgent]),
                idempotencyKey: (try IdempotencyKeys.key(of: request, scope: id)) ?? MessageID.text(of: MessageID.make())),
            traceparent: context.traceparent)
        return try JSONBodies.response(OnboardingUserJSON(user: user))
    }

    private func allowLegacy(_ context: GatewayContext) throws {
        guard legacyClients else { throw BusError(.unauthenticated, "sign in: send Authorization: Bearer <session token>") }
        context.logger.warning("legacy client: unauthenticated request let through (GATEWAY_LEGACY_UNAUTHENTICATED_CLIENTS is on)")
    }
}

/// Read once per acceptance: by hand (``HandDecodedJSON``), leaving anything else, and every error
/// message, to `Decodable`.
extension OnboardingRoutes.AcceptBody: HandDecodedJSON {
    init(json: JSONInput) throws {
        var version: String?
        try json.members { key, value in
            if key == "tos_version" { version = try value.string() }
        }
        guard let version else { throw JSONInput.Mismatch() }
        tos_version = version
    }
}
