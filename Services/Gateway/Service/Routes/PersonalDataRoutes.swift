import Bus
import Contracts
import Foundation
import Hummingbird

/// The user's rights over their own data, beside reading (`GET /api/me`) and deletion:
/// correcting the profile (`PATCH /api/me`) and exporting everything held (`GET /api/me/export`).
/// Both stay open to a user who has not accepted the terms in effect: the rights do not depend on
/// agreeing to anything.
package struct PersonalDataRoutes {
    let services: ServiceClients
    let authenticator: Authenticator
    let limits: RateLimits
    let chunkSize: Int
    let maxBodyBytes: Int

    /// The fields a user may correct; absent ones stay as they are.
    struct CorrectionBody: Decodable {
        let name: String?
        let email: String?
        let state: String?
    }

    func register(on family: RouteFamily) {
        // Reading, exporting and correcting one's own data stay open to a user who has not accepted the terms.
        let signedIn = family.signedIn(by: authenticator, termsAccepted: false)
        signedIn.add(
            .patch, "/api/me",
            "Correct the profile: {name?, email?, state?} (a new state is checked against the eligibility rules) → the user.", public: false
        ) { request, context in
            let id = try context.signedIn().userId
            let body = try await JSONBodies.decode(CorrectionBody.self, from: request, limit: maxBodyBytes)
            let user = try await services.call(
                .accounts, AccountsCorrectProfile.self,
                .init(
                    userId: id, name: body.name, email: body.email, state: body.state, clientIP: context.clientIP,
                    userAgent: request.headers[.userAgent]),
                principal: Credential.principal(for: id), context: context)
            return try JSONBodies.response(user)
        }
        signedIn.add(
            .get, "/api/me/export",
            "Everything held about the user (profile, consents with signed receipts, documents and their bytes, share links, sessions) as one streamed ZIP.",
            public: false, docs: RouteDocs(answer: .zip, rateLimited: true)
        ) { _, context in
            let id = try context.signedIn().userId
            try limits.export(userId: id)
            let contents = try await ExportContents.gather(for: id, services: services, context: context)
            let generatedAt = Date()
            let archive = ExportArchive(
                contents: contents, user: id, generatedAt: generatedAt, services: services, chunkSize: chunkSize, traceparent: context.traceparent)
            let day = Timestamp.format(generatedAt).prefix(10)
            return Response(
                status: .ok,
                headers: [
                    .contentType: "application/zip", .cacheControl: "no-store",
                    .contentDisposition: "attachment; filename=\"recruiting-compass-export-\(day).zip\"",
                ],
                body: ResponseBody { writer in try await archive.write(to: &writer) })
        }
    }
}
