import Bus
import Contracts
import Foundation

/// `accounts.get_or_create`, seed 004's `getOrCreateUser`:
/// - an existing Apple id: the user, unchanged but for a blank email or name being filled;
/// - a new one without `state`: an unconfirmed user, not stored (no account before eligibility);
/// - a new one with `state`: the state must be a jurisdiction and not restricted, eligibility
///   certified; then the user, the eligibility confirmation and, when `tosVersion` is the version
///   in effect, the acceptance (an entry of the consent stream, for Audit to chain) are stored in
///   one transaction. Any other `tosVersion` (an older one an app hard-codes, or none) records no
///   acceptance: the user is created needing to accept the terms in effect (`needsToAcceptTOS`).
///
/// A user stored by the two-writer path whose sign-up acceptance Audit never recorded
/// (`signupReceiptId` nil) has it streamed at their next get_or_create, with that call's client address.
struct SignUp: Sendable {
    let store: AccountsStore
    let rules: EligibilityRules
    let peers: Peers
    let signal: ConsentSignal
    /// A sign-up that streamed its acceptance waits (bounded) for Audit to chain it, so the
    /// consent status and history a client reads next already show it.
    let chained: ChainWait

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
        if let recordId = user.signupReceiptId {
            signal.committed()
            await chained.wait(user: user.id, recordId: recordId)
        }
        return try await UserView(peers: peers).present(user)
    }

    /// An existing user: blanks filled, a sign-up acceptance not yet recorded finished.
    private func returning(_ existing: StoredUser, _ request: AccountsGetOrCreate.Request) async throws -> AccountUser {
        var user = existing
        let fills = (user.email ?? "").isEmpty && !(request.email ?? "").isEmpty || (user.name ?? "").isEmpty && !(request.name ?? "").isEmpty
        if fills, let filled = try await store.fillBlanks(user.id, email: request.email, name: request.name) { user = filled }
        if user.signupReceiptId == nil && user.tosVersion != nil,
            let streamed = try await store.streamSignup(user.id, clientIP: request.clientIP, userAgent: request.userAgent)
        {
            user = streamed
            signal.committed()
            if let recordId = streamed.signupReceiptId { await chained.wait(user: user.id, recordId: recordId) }
        }
        return try await UserView(peers: peers).present(user)
    }
}
