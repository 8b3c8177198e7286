import Bus
import Contracts
import Foundation

/// `accounts.accept_terms` and `accounts.decline_terms`: the version must be the one in effect;
/// the act is recorded through Audit first (answered only after it commits), then an acceptance
/// is stored on the user, and the reply's flags follow from that acceptance (Audit is not asked
/// again). Audit's idempotency key comes from the caller's, so a retry of one
/// call records once while a later, separate acceptance records again.
struct TermsActions: Sendable {
    let store: AccountsStore
    let peers: Peers

    func act(_ action: AcceptanceAction, _ request: AccountsTermsRequest, key: String?) async throws -> AccountUser {
        try SignUpValidation.checkClient(ip: request.clientIP, userAgent: request.userAgent)
        guard let found = try await store.user(id: request.userId) else { throw try await store.missing(request.userId) }
        let current = try await peers.currentTermsVersion(expecting: request.tosVersion)
        guard request.tosVersion == current else { throw SignUpValidation.staleTerms(request.tosVersion, current: current) }
        let callKey = key.flatMap { $0.isEmpty ? nil : $0 } ?? UUID().uuidString
        guard callKey.utf8.count <= 150 else { throw BusError(.invalidArgument, "the idempotency key is longer than 150 bytes") }
        let user = try await SignUp.recordSignup(found, store: store, peers: peers, clientIP: request.clientIP, userAgent: request.userAgent)
        let receipt = try await peers.record(
            action, user: user.id, version: current, key: "accounts.\(action.rawValue):\(callKey)",
            clientIP: request.clientIP, userAgent: request.userAgent)
        guard action == .accept else { return try await UserView(peers: peers).present(user) }
        guard let stored = try await store.accepted(user.id, version: receipt.version, at: receipt.recordedAt) else {
            throw AccountsHandlers.unknown(user.id)
        }
        // A retry answered with an earlier call's receipt may name another version: ask Audit then.
        guard receipt.version == current else { return try await UserView(peers: peers).present(stored) }
        return UserView.justAccepted(stored)
    }
}
