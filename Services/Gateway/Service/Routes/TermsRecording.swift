import Bus
import Contracts
import Foundation

/// Accepting or declining the terms of service, whichever route it comes through (the native
/// `/api/me/consents/terms_of_service/{accept|decline}`, a PostgREST insert into
/// `legal_acceptances`): always through Accounts (`accounts.accept_terms` / `decline_terms`), which
/// keeps the user's standing that the enforcement of the terms reads (``TermsGate``), refuses a
/// version that is not the one in effect (`409`, naming it) and records through Audit. Declining
/// signs the user out everywhere. The answer is the consent receipt Audit signed.
struct TermsRecording: Sendable {
    let services: ServiceClients
    let sessions: SessionVerifier

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
            _ = try await services.call(.accounts, AccountsDeclineTerms.self, terms, principal: principal, context: context, idempotencyKey: key)
            // Declining signed the user out everywhere: this session is refused here at once (and
            // the acceptance this gateway held is dropped); the others, here and at other
            // gateways, by Accounts' `session.revoked` events.
            sessions.revoked(SessionRevoked(sessionId: sessionId, userId: user, revokedAt: Date()))
        case .acknowledge:
            throw BusError(.invalidArgument, "acknowledge applies to the privacy policy; accept or decline the terms")
        }
        // Accounts answers with the user; the receipt is the newest record of the terms.
        let history = try await services.call(
            .audit, AuditHistory.self, .init(userId: user, documentType: .termsOfService, limit: 1), principal: principal, context: context)
        guard let receipt = history.records.first?.receipt else { throw BusError(.internal, "the record is missing from the history") }
        return receipt
    }
}
