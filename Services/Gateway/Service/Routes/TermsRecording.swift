import Bus
import Contracts
import Foundation

/// Accepting or declining the terms of service through Accounts (`accounts.accept_terms` /
/// `decline_terms`), which keeps the user's standing that the enforcement of the terms reads
/// (``TermsGate``), refuses a version that is not the one in effect (`409`, naming it) and records
/// through Audit. ``ConsentRoutes`` (`/api/me/consents/terms_of_service/{accept|decline}`) records
/// both here and answers with the consent receipt Audit signed; a route module's acceptance write
/// (the Supabase module's insert into `legal_acceptances`) accepts through the ``AcceptanceBatcher``
/// and declines through ``decline(_:sessionId:key:context:)``, the one place a decline signs the user out.
package struct TermsRecording: Sendable {
    let services: ServiceClients
    let sessions: SessionVerifier

    package init(services: ServiceClients, sessions: SessionVerifier) {
        self.services = services
        self.sessions = sessions
    }

    func record(
        _ action: AcceptanceAction, version: String, user: UUID, sessionId: UUID, clientIP: String?, userAgent: String?, key: String?,
        context: GatewayContext
    ) async throws -> ConsentReceipt {
        let principal = Credential.principal(for: user)
        let terms = AccountsTermsRequest(userId: user, tosVersion: version, clientIP: clientIP, userAgent: userAgent)
        switch action {
        case .accept:
            _ = try await services.call(.accounts, AccountsAcceptTerms.self, terms, principal: principal, context: context, idempotencyKey: key)
        case .decline:
            try await decline(terms, sessionId: sessionId, key: key, context: context)
        case .acknowledge:
            throw BusError(.invalidArgument, "acknowledge applies to the privacy policy; accept or decline the terms")
        }
        // Accounts answers with the user; the receipt is the newest record of the terms.
        let history = try await services.call(
            .audit, AuditHistory.self, .init(userId: user, documentType: .termsOfService, limit: 1), principal: principal, context: context)
        guard let receipt = history.records.first?.receipt else { throw BusError(.internal, "the record is missing from the history") }
        return receipt
    }

    /// Declines the terms for `terms.userId` (acting as that user) and signs them out everywhere:
    /// Accounts revokes every session, this one (`sessionId`) is refused here at once (and the
    /// acceptance this gateway held is dropped); the others, here and at other gateways, by
    /// Accounts' `session.revoked` events.
    package func decline(_ terms: AccountsTermsRequest, sessionId: UUID, key: String?, context: GatewayContext) async throws {
        _ = try await services.call(
            .accounts, AccountsDeclineTerms.self, terms, principal: Credential.principal(for: terms.userId), context: context,
            idempotencyKey: key)
        sessions.revoked(SessionRevoked(sessionId: sessionId, userId: terms.userId, revokedAt: Date()))
    }
}
