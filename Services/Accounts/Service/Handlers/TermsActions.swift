import Bus
import Contracts
import Foundation
import ServiceKit

/// `accounts.accept_terms` and `accounts.decline_terms`: the version must be the one in effect;
/// the act is stored in one transaction with the user's standing and, as an entry of the consent
/// stream, for Audit to chain (Accounts is the one synchronous writer of an act). The caller's
/// idempotency key, scoped to the user, makes a retry of one call write once, while a later,
/// separate act writes again. These two calls then wait (``ChainWait``, a bound) for Audit to
/// chain the act, because the gateway's consent routes read its signed receipt next; the batch
/// does not wait.
///
/// Declining signs the user out everywhere (seed 001: "If decline: user logged out, cannot use
/// app"): once the decline is stored (the user's standing, which the gateway's enforcement reads
/// through `accounts.terms_standing`), every session of the user ends and a `session.revoked`
/// event for each tells the gateways, so neither its access tokens nor its refresh tokens work any
/// more. Signing in again opens a new session.
struct TermsActions: Sendable {
    let store: AccountsStore
    let peers: Peers
    let outbox: Outbox
    let backlog: ConsentBacklog
    let chained: ChainWait
    let signal: ConsentSignal

    func act(_ action: AcceptanceAction, _ request: AccountsTermsRequest, key: String?) async throws -> AccountUser {
        let callKey = try Self.checked(request, key: key)
        if let refusal = backlog.refusal() { throw refusal }
        guard let user = try await store.user(id: request.userId) else { throw try await store.missing(request.userId) }
        let current = try await peers.currentTermsVersion(expecting: request.tosVersion)
        guard request.tosVersion == current else { throw SignUpValidation.staleTerms(request.tosVersion, current: current) }
        guard action == .accept else {
            guard
                let declined = try await store.declined(
                    user.id, version: current, key: Self.streamKey(.decline, callKey), clientIP: request.clientIP,
                    userAgent: request.userAgent, outbox: outbox)
            else { throw try await store.missing(user.id) }
            signal.committed()
            _ = try await store.revokeAllSessions(of: user.id, appleId: user.appleId, outbox: outbox)
            outbox.committed()
            await chained.wait(user: user.id, recordId: declined.recordId)
            guard let now = try await store.user(id: user.id) else { throw try await store.missing(user.id) }
            return try await UserView(peers: peers).present(now)
        }
        let item = AcceptanceItem(
            user: user.id, version: current, key: Self.streamKey(.accept, callKey), clientIP: request.clientIP,
            userAgent: request.userAgent, recordId: .timeOrdered())
        guard let result = try await store.accept([item])[user.id] else { throw try await store.missing(user.id) }
        if result.written {
            signal.committed()
            await chained.wait(user: user.id, recordId: item.recordId)
        }
        return try await Self.view(of: result, current: current, peers: peers)
    }

    /// Checks what the caller forwards; the caller's key, or a fresh one when it gave none.
    static func checked(_ request: AccountsTermsRequest, key: String?) throws -> String {
        try ConsentClientRule.check(clientIP: request.clientIP, userAgent: request.userAgent)
        try LegalVersionRule.check(request.tosVersion, field: "tosVersion")
        let callKey = key.flatMap { $0.isEmpty ? nil : $0 } ?? MessageID.text(of: MessageID.make())
        // The key Audit gets is this one with a prefix: both must pass the bus's one rule.
        guard IdempotencyKeyRule.isValidBusKey(streamKey(.decline, callKey)) else {
            throw BusError(
                .invalidArgument, "the idempotency key is too long (the bus allows \(IdempotencyKeyRule.busKeyMaximumBytes) bytes with its scope)")
        }
        return callKey
    }

    /// The key an act is streamed (and recorded by Audit) with: a retry of the call records once,
    /// another call records again. The same keys as when Accounts called Audit itself, so an act
    /// recorded that way is not recorded twice.
    static func streamKey(_ action: AcceptanceAction, _ callKey: String) -> String { "accounts.\(action.rawValue):\(callKey)" }

    /// The reply once an acceptance is stored: just accepted when this call wrote it; as the user
    /// stands now when the key had been used (the earlier call's acceptance stands).
    static func view(of result: AcceptanceResult, current: String, peers: Peers) async throws -> AccountUser {
        guard result.written, result.user.tosVersion == current else { return try await UserView(peers: peers).present(result.user) }
        return UserView.justAccepted(result.user)
    }
}
