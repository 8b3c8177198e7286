import Bus
import Contracts
import Foundation
import Hummingbird

/// The signed-in user's consent (`/api/me/consents`…): where they stand with each document,
/// accept / acknowledge / decline a version, their history, and checking a receipt.
///
/// Accepting or declining the terms goes through Accounts (`accounts.accept_terms` /
/// `decline_terms`), which keeps the user's `tos_version` and records through Audit; the privacy
/// policy (and acknowledging either) is recorded with Audit directly. The reply is the consent
/// receipt either way. An `Idempotency-Key` header makes a retried request record once. Writes
/// are rate-limited per client address, then per verified user (``RateLimits``).
package struct ConsentRoutes {
    let services: ServiceClients
    let authenticator: Authenticator
    let limits: RateLimits
    let maxBodyBytes: Int

    struct ActionBody: Decodable { let version: String }

    func register(on family: RouteFamily) {
        // The user's own consent stays open to a user who has not accepted the terms: it is where they accept them.
        let signedIn = family.signedIn(by: authenticator, termsAccepted: false)
        signedIn.add(.get, "/api/me/consents", "Where the user stands with each document (needsAcceptance).", public: false) {
            _, context in
            let id = try context.signedIn().userId
            return try JSONBodies.response(
                try await services.call(.audit, AuditStatus.self, .init(userId: id), principal: Credential.principal(for: id), context: context))
        }
        signedIn.add(
            .get, "/api/me/consents/history", "The user's records, newest first (?documentType=&limit=&before=).", public: false,
            docs: RouteDocs(query: [
                ("documentType", RouteDocs.oneOf(LegalDocumentType.allCases.map(\.rawValue))),
                ("limit", RouteDocs.integer(minimum: 1, maximum: PageLimit.consentHistoryRoute.maximum)), ("before", RouteDocs.text),
            ])
        ) { request, context in
            let id = try context.signedIn().userId
            let query = request.uri.queryParameters
            var type: LegalDocumentType?
            if let raw = query["documentType"] {
                guard let parsed = LegalDocumentType(rawValue: String(raw)) else {
                    throw BusError(.invalidArgument, "documentType must be privacy_policy or terms_of_service")
                }
                type = parsed
            }
            var limit = 100
            if let raw = query["limit"] { limit = try PageLimit.consentHistoryRoute.validate(text: raw) }
            let history = try await services.call(
                .audit, AuditHistory.self, .init(userId: id, documentType: type, limit: limit, before: query["before"].map(String.init)),
                principal: Credential.principal(for: id), context: context)
            return try JSONBodies.response(history)
        }
        // Writes: the per-address limit before the credential is looked at, the per-user one once it is verified.
        let recording = family.group(AddressRateLimitMiddleware(limits: limits, limit: .accept))
            .signedIn(by: authenticator, termsAccepted: false)
        recording.add(
            .post, "/api/me/consents/:type/:action",
            "Accept, acknowledge or decline a version: {version} → the consent receipt. Declining the terms signs the user out everywhere.",
            public: false, docs: RouteDocs(answer: .json(status: 201), rateLimited: true)
        ) { request, context in
            let caller = try context.signedIn()
            let (id, sessionId) = (caller.userId, caller.sessionId)
            try limits.accept(appleId: caller.appleId)
            let type = try LegalRoutes.type(context)
            guard let action = AcceptanceAction(rawValue: context.pathParameter("action") ?? "") else {
                throw BusError(.notFound, "the action must be accept, acknowledge or decline")
            }
            let body = try await JSONBodies.decode(ActionBody.self, from: request, limit: maxBodyBytes)
            let key = try IdempotencyKeys.key(of: request, scope: id)
            let principal = Credential.principal(for: id)
            let userAgent = request.headers[.userAgent]
            if type == .termsOfService, action != .acknowledge {
                let receipt = try await TermsRecording(services: services, sessions: authenticator.sessions).record(
                    action, version: body.version, user: id, sessionId: sessionId, clientIP: context.clientIP, userAgent: userAgent, key: key,
                    context: context)
                return try JSONBodies.response(receipt, status: .created)
            }
            let receipt = try await services.call(
                .audit, AuditRecord.self,
                .init(userId: id, documentType: type, version: body.version, action: action, clientIP: context.clientIP, userAgent: userAgent),
                principal: principal, context: context, idempotencyKey: key ?? "http:\(id.uuidString.lowercased()):\(context.requestID)")
            return try JSONBodies.response(receipt, status: .created)
        }
        family.add(.post, "/api/receipts/verify", "Check a consent receipt against the audit trail: {valid, reason}.", public: true) {
            request, context in
            let receipt = try await JSONBodies.decode(ConsentReceipt.self, from: request, limit: maxBodyBytes)
            return try JSONBodies.response(try await services.call(.audit, AuditVerifyReceipt.self, receipt, principal: .anonymous, context: context))
        }
    }
}

extension PageLimit {
    /// `GET /api/me/consents/history`: the public route pages at most 500 records, half what
    /// ``auditHistory`` allows operators and services over the bus.
    static let consentHistoryRoute = PageLimit(maximum: 500)
}
