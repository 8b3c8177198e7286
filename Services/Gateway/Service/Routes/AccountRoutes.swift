import Bus
import Contracts
import Foundation
import Hummingbird

/// The signed-in user's account (`/api/me`…): read it, confirm eligibility (which creates the
/// account of a session bound only to an Apple id), and deletion (preview, request, confirm,
/// cancel). Each acts as the user (`principal` `user:<id>`), so Accounts applies its own rule that
/// a user acts only for itself.
package struct AccountRoutes {
    let services: ServiceClients
    let authenticator: Authenticator
    let maxBodyBytes: Int

    struct EligibilityBody: Decodable {
        let state: String
        let eligibilityCertified: Bool
        let tosVersion: String
        let email: String?
        let name: String?
    }

    func register(on family: RouteFamily) {
        // Every route acts for the signed-in user but confirming eligibility (its session is not bound to an account
        // yet, or it is an Apple identity token) and the public deletion certificates. None needs the terms accepted:
        // the account's own data and its deletion stay open.
        let signedIn = family.signedIn(by: authenticator, termsAccepted: false)
        signedIn.add(.get, "/api/me", "The signed-in user.", public: false) { request, context in
            let id = try context.signedIn().userId
            return try JSONBodies.response(
                try await services.call(.accounts, AccountsGet.self, .init(userId: id), principal: Credential.principal(for: id), context: context))
        }
        family.authenticated(by: authenticator).add(
            .post, "/api/me/eligibility", "Confirm eligibility (state, certification, terms version): creates the account.", public: false
        ) { request, context in
            guard let credential = try context.authentication().credential(), let appleId = credential.appleId else {
                throw BusError(.unauthenticated, "sign in with Apple first")
            }
            let body = try await JSONBodies.decode(EligibilityBody.self, from: request, limit: maxBodyBytes)
            let user = try await services.call(
                .accounts, AccountsGetOrCreate.self,
                .init(
                    appleId: appleId, email: body.email, name: body.name, state: body.state, eligibilityCertified: body.eligibilityCertified,
                    tosVersion: body.tosVersion, clientIP: context.clientIP, userAgent: request.headers[.userAgent]),
                principal: .service("gateway"), context: context)
            return try JSONBodies.response(user)
        }
        signedIn.add(.get, "/api/me/deletion/preview", "What deleting the account would delete and keep.", public: false) { _, context in
            let id = try context.signedIn().userId
            return try JSONBodies.response(
                try await services.call(
                    .accounts, AccountsDeletionPreview.self, .init(userId: id), principal: Credential.principal(for: id), context: context))
        }
        signedIn.add(
            .post, "/api/me/deletion", "Request deletion: a request id to confirm within 15 minutes.", public: false,
            docs: RouteDocs(answer: .json(status: 201))
        ) { _, context in
            let id = try context.signedIn().userId
            let pending = try await services.call(
                .accounts, AccountsRequestDeletion.self, .init(userId: id), principal: Credential.principal(for: id), context: context)
            return try JSONBodies.response(pending, status: .created)
        }
        signedIn.add(.post, "/api/me/deletion/:requestId/confirm", "Confirm a deletion request: the account is deleted.", public: false) {
            _, context in
            let (id, requestId) = try decision(context)
            let deleted = try await services.call(
                .accounts, AccountsConfirmDeletion.self, .init(userId: id, requestId: requestId), principal: Credential.principal(for: id),
                context: context)
            // Refused here at once; other gateways learn it from Accounts' `account.deleted`.
            authenticator.sessions.revoked(UserSessionsRevoked(userId: deleted.userId, revokedAt: deleted.deletedAt))
            return try JSONBodies.response(deleted)
        }
        signedIn.add(.delete, "/api/me/deletion/:requestId", "Cancel a deletion request.", public: false) { _, context in
            let (id, requestId) = try decision(context)
            _ = try await services.call(
                .accounts, AccountsCancelDeletion.self, .init(userId: id, requestId: requestId), principal: Credential.principal(for: id),
                context: context)
            return Response(status: .noContent)
        }
        family.add(
            .get, "/api/deletion-certificates/:certificateId",
            "A deletion certificate by id (it names no one); re-signed once Apple's grant revocation settles.", public: true
        ) { _, context in
            guard let id = MessageID.parse(context.pathParameter("certificateId") ?? "") else {
                throw BusError(.invalidArgument, "the certificate id is not a UUID")
            }
            let certificate = try await services.call(
                .accounts, AccountsDeletionCertificate.self, .init(certificateId: id), principal: .service("gateway"), context: context)
            return try JSONBodies.response(certificate)
        }
    }

    private func decision(_ context: GatewayContext) throws -> (UUID, UUID) {
        let id = try context.signedIn().userId
        guard let requestId = MessageID.parse(context.pathParameter("requestId") ?? "") else {
            throw BusError(.invalidArgument, "the deletion request id is not a UUID")
        }
        return (id, requestId)
    }
}
