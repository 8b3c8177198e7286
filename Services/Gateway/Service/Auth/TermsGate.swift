import Bus
import Contracts
import Foundation
import Metrics

/// The server's enforcement of the terms of service (seed 001: "cannot use app" until accepted):
/// a route that needs a user who accepted the terms in effect is in a
/// ``RouteFamily/signedIn(by:termsAccepted:)`` group (`termsAccepted: true`), or calls
/// ``require(_:context:)`` itself, which
/// throws ``TermsNotAccepted`` (`403 terms_not_accepted` with the version to accept) until they do.
///
/// Decided in the gateway, with no bus call on the common path: the versions of the terms come
/// from the gateway's copy of the legal texts (``LegalTexts``, kept current by Legal's events),
/// and the version a user accepted from the ``SessionVerifier``'s view of Accounts' events, which
/// holds each user's acceptance as Accounts last answered it (`accounts.terms_standing`). The rule
/// is Audit's (``LegalVersionSummary/needsAcceptance(afterAccepting:versions:at:)``), so the
/// app's `needsToAcceptTOS` and this refusal agree: an editorial version changes nothing, a
/// material one takes effect for everyone at its `effectiveAt`.
///
/// Accounts is asked only when nothing acceptable is held: the user's first request at this
/// gateway, a user who has to accept (so an acceptance made through any gateway counts at once),
/// and while the event view is stale. Staleness is bounded as the sessions' is: a decline's
/// `accounts.terms_declined` event (and every `session.revoked` of the user) drops the held
/// acceptance within its delivery (milliseconds), at worst `GATEWAY_SESSION_REVOCATION_POLL`; with no word from
/// Accounts for `GATEWAY_SESSION_MAX_STALENESS`, every check asks Accounts. A newly
/// published version counts once the legal copy has it: its event's delivery, at worst
/// `GATEWAY_LEGAL_REFRESH` plus one call.
package struct TermsGate: Sendable {
    let services: ServiceClients
    let sessions: SessionVerifier
    let texts: LegalTexts

    private static let fromMemory = Counter(label: "gateway_terms_checks_total", dimensions: [("source", "memory")])
    private static let fromAccounts = Counter(label: "gateway_terms_checks_total", dimensions: [("source", "accounts")])
    private static let refusals = Counter(label: "gateway_terms_refusals_total")

    /// Returns when `user` accepted the terms in effect (or none are in effect); throws
    /// ``TermsNotAccepted`` otherwise.
    package func require(_ user: UUID, context: GatewayContext) async throws {
        let versions = try await termsVersions(context)
        let now = Date()
        guard let current = LegalVersionSummary.inEffect(versions, at: now) else { return }
        if let held = sessions.acceptedTerms(of: user), !LegalVersionSummary.needsAcceptance(afterAccepting: held, versions: versions, at: now) {
            Self.fromMemory.increment()
            return
        }
        Self.fromAccounts.increment()
        let standing = try await services.call(
            .accounts, AccountsTermsStanding.self, .init(userId: user), principal: .service("gateway"), context: context)
        if let accepted = standing.acceptedVersion { sessions.rememberAcceptedTerms(accepted, of: user, asOf: standing.sequence) }
        guard LegalVersionSummary.needsAcceptance(afterAccepting: standing.acceptedVersion, versions: versions, at: now) else { return }
        Self.refusals.increment()
        throw TermsNotAccepted(currentVersion: current.version)
    }

    /// Every published terms version: from the legal copy, or (before its first load) from Legal.
    private func termsVersions(_ context: GatewayContext) async throws -> [LegalVersionSummary] {
        if let held = texts.versions(of: .termsOfService) { return held }
        return try await services.call(.legal, LegalHistory.self, .init(type: .termsOfService), principal: .service("gateway"), context: context)
            .versions
    }
}
