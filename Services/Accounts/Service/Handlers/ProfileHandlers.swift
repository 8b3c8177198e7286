import Bus
import Contracts
import Foundation
import ServiceKit

/// The user's own data: `accounts.correct_profile` (the right to correction) and
/// `accounts.export` (the Accounts part of the data export). Same rule as the other methods: a
/// user principal acts only for itself.
struct ProfileHandlers: Sendable {
    let store: AccountsStore
    let rules: EligibilityRules
    let peers: Peers

    func register(on server: RPCServer) {
        server.register(AccountsCorrectProfile.self) { request, context in
            try context.authorize(actingFor: request.userId)
            let checked = try ProfileValidation.check(request, rules: rules)
            guard let user = try await store.user(id: request.userId) else { throw try await store.missing(request.userId) }
            let change = ProfileValidation.changes(checked, from: user)
            // Giving the values already held changes and records nothing.
            guard !change.fields.isEmpty else { return try await UserView(peers: peers).present(user) }
            guard let corrected = try await store.correctProfile(user.id, change) else { throw try await store.missing(request.userId) }
            context.logger.notice("profile corrected", metadata: ["user": "\(user.id)", "fields": "\(change.fields.joined(separator: ","))"])
            return try await UserView(peers: peers).present(corrected)
        }
        server.register(AccountsExport.self) { request, context in
            try context.authorize(actingFor: request.userId)
            guard let user = try await store.user(id: request.userId), let records = try await store.exportedRecords(of: user) else {
                throw try await store.missing(request.userId)
            }
            return AccountsExport.Reply(
                user: try await UserView(peers: peers).present(user), eligibilityConfirmations: records.confirmations,
                profileCorrections: records.corrections, sessions: records.sessions, appleRefreshTokenHeld: records.appleRefreshTokenHeld,
                appleEmailDisabled: records.appleEmailDisabled)
        }
    }
}
