import Bus
import Contracts
import Foundation
import ServiceKit

/// Account deletion (seed 003): preview, request, confirm, cancel. Only the user (or a service or
/// operator acting for them) may. Confirming deletes the account and emits `account.deleted` in
/// one transaction; the Audit erasure is then driven by ``AuditErasure``.
struct DeletionHandlers: Sendable {
    let store: AccountsStore
    let outbox: Outbox
    let erasure: AuditErasure
    /// How long a deletion request may wait for its confirmation.
    static let requestLifetimeSeconds = 15 * 60

    func register(on server: RPCServer) {
        server.register(AccountsDeletionPreview.self) { request, context in
            try AccountsHandlers.authorize(context, for: request.userId)
            return try await preview(request.userId)
        }
        server.register(AccountsRequestDeletion.self) { request, context in
            try AccountsHandlers.authorize(context, for: request.userId)
            let shown = try await preview(request.userId)
            let pending = try await store.requestDeletion(request.userId, lifetime: Self.requestLifetimeSeconds)
            return DeletionRequest(
                requestId: pending.requestId, userId: pending.userId, requestedAt: pending.requestedAt,
                expiresAt: pending.expiresAt, preview: shown)
        }
        server.register(AccountsConfirmDeletion.self) { request, context in
            try AccountsHandlers.authorize(context, for: request.userId)
            let outcome = try await store.confirmDeletion(request.userId, request: request.requestId, outbox: outbox)
            if outcome.created {
                outbox.committed()
                context.logger.notice("account deleted", metadata: ["user": "\(request.userId)"])
                await erasure.eraseNow(request.userId)
            }
            return AccountsConfirmDeletion.Reply(userId: request.userId, deletedAt: outcome.deletedAt)
        }
        server.register(AccountsCancelDeletion.self) { request, context in
            try AccountsHandlers.authorize(context, for: request.userId)
            guard try await store.cancelDeletion(request.userId, request: request.requestId) else {
                throw BusError(.notFound, "no pending deletion \(request.requestId.uuidString.lowercased()) for this user")
            }
            return Empty()
        }
    }

    /// What deletion removes and what stays (seed 003 FR-007).
    func preview(_ id: UUID) async throws -> DeletionPreview {
        guard try await store.user(id: id) != nil else { throw try await store.missing(id) }
        let confirmations = try await store.confirmationCount(id)
        let sessions = try await store.sessionCount(id)
        return DeletionPreview(
            userId: id,
            deleted: [
                DeletionItem(category: "profile", description: "Your account: Apple ID link, email, name, username and state.", count: 1),
                DeletionItem(category: "eligibility_confirmations", description: "Your eligibility confirmations.", count: confirmations),
                DeletionItem(category: "documents", description: "Documents you uploaded, and their share links."),
                DeletionItem(category: "sessions", description: "Your sign-ins on every device: you are signed out.", count: sessions),
            ],
            kept: [
                DeletionItem(
                    category: "consent_records",
                    description: "Records that a version of the terms or privacy policy was accepted or declined, kept as legal proof "
                        + "with no link to you: your identity, IP address and device are erased from them."),
            ])
    }
}
