import Bus
import Contracts
import Foundation

/// `accounts.get_or_create`, seed 004's `getOrCreateUser`:
/// - an existing Apple id: the user, unchanged but for a blank email or name being filled;
/// - a new one without `state`: an unconfirmed user, not stored (no account before eligibility);
/// - a new one with `state`: the state must be a jurisdiction and not restricted, eligibility
///   certified; then the user and the eligibility confirmation are stored in one transaction and,
///   when `tosVersion` is the version in effect, the acceptance recorded through Audit. Any other
///   `tosVersion` (an older one an app hard-codes, or none) records no acceptance: the user is
///   created needing to accept the terms in effect (`needsToAcceptTOS`).
///
/// The Audit call comes after the commit, with a key derived from the new user's id: if it fails
/// the user exists with `signupReceiptId` nil, and the next get_or_create of that Apple id (or the
/// user's next accept/decline) records it, with that call's client address (same key, so Audit
/// never holds it twice; the sign-up's own address is in `eligibility_confirmations`).
struct SignUp: Sendable {
    let store: AccountsStore
    let rules: EligibilityRules
    let peers: Peers

    func getOrCreate(_ request: AccountsGetOrCreate.Request) async throws -> AccountUser {
        try SignUpValidation.checkIdentity(request)
        if let existing = try await store.user(appleId: request.appleId) {
            return try await returning(existing, request)
        }
        guard let state = request.state else {
            return UserView.unconfirmed(appleId: request.appleId, email: request.email, name: request.name)
        }
        let code = try SignUpValidation.checkState(state, rules: rules)
        guard request.eligibilityCertified == true else {
            throw BusError(.invalidArgument, "eligibility must be certified: at least \(rules.minimumAge) years old, and a skill-based contest")
        }
        // An app in the store sends the terms version it was built with; once newer terms are in
        // effect the account is still created, without an acceptance of terms no longer in
        // effect: the reply says `needsToAcceptTOS`, and the app shows the current terms.
        let current = try await peers.currentTermsVersion(expecting: request.tosVersion)
        let new = NewUser(
            appleId: request.appleId, email: request.email, name: request.name, state: code, rulesVersion: rules.version,
            minimumAge: rules.minimumAge, tosVersion: request.tosVersion == current ? current : nil, clientIP: request.clientIP,
            userAgent: request.userAgent)
        let (user, created) = try await store.insert(new)
        if !created { return try await returning(user, request) }
        let recorded = try await Self.recordSignup(user, store: store, peers: peers, clientIP: request.clientIP, userAgent: request.userAgent)
        return try await UserView(peers: peers).present(recorded)
    }

    /// An existing user: blanks filled, a sign-up acceptance not yet recorded finished.
    private func returning(_ existing: StoredUser, _ request: AccountsGetOrCreate.Request) async throws -> AccountUser {
        var user = existing
        let fills = (user.email ?? "").isEmpty && !(request.email ?? "").isEmpty || (user.name ?? "").isEmpty && !(request.name ?? "").isEmpty
        if fills, let filled = try await store.fillBlanks(user.id, email: request.email, name: request.name) { user = filled }
        user = try await Self.recordSignup(user, store: store, peers: peers, clientIP: request.clientIP, userAgent: request.userAgent)
        return try await UserView(peers: peers).present(user)
    }

    /// Records the sign-up acceptance through Audit unless it already is (`signupReceiptId`). Also
    /// called before a later accept or decline, so Audit's order of events stays the user's.
    static func recordSignup(_ user: StoredUser, store: AccountsStore, peers: Peers, clientIP: String?, userAgent: String?)
        async throws -> StoredUser
    {
        guard user.signupReceiptId == nil, let version = user.tosVersion else { return user }
        let receipt = try await peers.record(
            .accept, user: user.id, version: version, key: "accounts.signup:\(user.id.uuidString.lowercased())",
            clientIP: clientIP, userAgent: userAgent)
        return try await store.signupRecorded(user.id, receipt: receipt.recordId, at: receipt.recordedAt) ?? user
    }
}
