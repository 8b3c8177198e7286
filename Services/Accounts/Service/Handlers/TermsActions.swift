import Bus
import Contracts
import Foundation
import ServiceKit

/// `accounts.accept_terms` and `accounts.decline_terms`: the version must be the one in effect;
/// the act is recorded through Audit first (answered only after it commits), then an acceptance
/// is stored on the user, and the reply's flags follow from that acceptance (Audit is not asked
/// again). Audit's idempotency key comes from the caller's, so a retry of one
/// call records once while a later, separate acceptance records again.
///
/// Declining signs the user out everywhere (seed 001: "If decline: user logged out, cannot use
/// app"): once the decline is recorded (and stored as the user's standing, which the gateway's
/// enforcement reads through `accounts.terms_standing`), every session of the user ends and a `session.revoked`
/// event for each tells the gateways, so neither its access tokens nor its refresh tokens work any
/// more. Signing in again opens a new session.
struct TermsActions: Sendable {
    let store: AccountsStore
    let peers: Peers
    let outbox: Outbox

    func act(_ action: AcceptanceAction, _ request: AccountsTermsRequest, key: String?) async throws -> AccountUser {
        let callKey = try Self.checked(request, key: key)
        guard let found = try await store.user(id: request.userId) else { throw try await store.missing(request.userId) }
        let current = try await peers.currentTermsVersion(expecting: request.tosVersion)
        guard request.tosVersion == current else { throw SignUpValidation.staleTerms(request.tosVersion, current: current) }
        let user = try await SignUp.recordSignup(found, store: store, peers: peers, clientIP: request.clientIP, userAgent: request.userAgent)
        let receipt = try await peers.record(
            action, user: user.id, version: current, key: Self.auditKey(action, callKey),
            clientIP: request.clientIP, userAgent: request.userAgent)
        guard action == .accept else {
            guard try await store.declined(user.id, at: receipt.recordedAt, outbox: outbox) else {
                throw try await store.recordedAfterRemoval(user.id)
            }
            _ = try await store.revokeAllSessions(of: user.id, appleId: user.appleId, outbox: outbox)
            outbox.committed()
            return try await UserView(peers: peers).present(user)
        }
        guard let stored = try await store.accepted(user.id, version: receipt.version, at: receipt.recordedAt) else {
            throw try await store.recordedAfterRemoval(user.id)
        }
        return try await Self.view(of: stored, acceptedVersion: receipt.version, current: current, peers: peers)
    }

    /// Checks what the caller forwards; the caller's key, or a fresh one when it gave none.
    static func checked(_ request: AccountsTermsRequest, key: String?) throws -> String {
        try SignUpValidation.checkClient(ip: request.clientIP, userAgent: request.userAgent)
        let callKey = key.flatMap { $0.isEmpty ? nil : $0 } ?? MessageID.text(of: MessageID.make())
        // The key Audit gets is this one with a prefix: both must pass the bus's one rule.
        guard IdempotencyKeyRule.isValidBusKey(auditKey(.decline, callKey)) else {
            throw BusError(
                .invalidArgument, "the idempotency key is too long (the bus allows \(IdempotencyKeyRule.busKeyMaximumBytes) bytes with its scope)")
        }
        return callKey
    }

    /// The Audit key of one call: a retry of the call records once, another call records again.
    static func auditKey(_ action: AcceptanceAction, _ callKey: String) -> String { "accounts.\(action.rawValue):\(callKey)" }

    /// The reply after an acceptance of `acceptedVersion` was stored: the flags follow from it, unless
    /// a retry was answered with an earlier call's receipt naming another version; Audit is asked then.
    static func view(of stored: StoredUser, acceptedVersion: String, current: String, peers: Peers) async throws -> AccountUser {
        guard acceptedVersion == current else { return try await UserView(peers: peers).present(stored) }
        return UserView.justAccepted(stored)
    }
}
