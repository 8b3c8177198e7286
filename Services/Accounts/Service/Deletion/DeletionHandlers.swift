import Bus
import Contracts
import Foundation
import Locks
import Logging
import ServiceKit

/// Account deletion (seed 003): preview, request, confirm, cancel, and the certificate by id. Only
/// the user (or a service or operator acting for them) may act on an account. Confirming deletes
/// the account, emits `account.deleted` and signs the certificate in one transaction; the Audit
/// erasure (``AuditErasure``) and the Apple token revocation (``AppleTokenRevoker``) follow.
struct DeletionHandlers: Sendable {
    let store: AccountsStore
    let outbox: Outbox
    let erasure: AuditErasure
    let documents: DocumentsLookup
    let certifier: DeletionCertifier
    /// Woken after a deletion so the Apple token is revoked without waiting for the next sweep.
    let revoker: AppleTokenRevoker
    /// Woken after a deletion so Audit's long poll reads the deletion from the consent stream at once.
    let consents: ConsentSignal
    /// How long a deletion request may wait for its confirmation.
    static let requestLifetimeSeconds = 15 * 60

    func register(on server: RPCServer) {
        server.register(AccountsDeletionPreview.self) { request, context in
            try context.authorize(actingFor: request.userId)
            return try await preview(request.userId)
        }
        server.register(AccountsRequestDeletion.self) { request, context in
            try context.authorize(actingFor: request.userId)
            let shown = try await preview(request.userId)
            let pending = try await store.requestDeletion(request.userId, lifetime: Self.requestLifetimeSeconds)
            return DeletionRequest(
                requestId: pending.requestId, userId: pending.userId, requestedAt: pending.requestedAt,
                expiresAt: pending.expiresAt, preview: shown)
        }
        server.register(AccountsConfirmDeletion.self) { request, context in
            try context.authorize(actingFor: request.userId)
            // Counted before the transaction for the certificate; Documents can delay this by at
            // most its usage deadline, and never fail it.
            let usage = try await store.user(id: request.userId) == nil ? nil : await documents.usage(of: request.userId)
            let outcome = try await store.confirmDeletion(
                request.userId, request: request.requestId, documents: usage, certifier: certifier, outbox: outbox)
            var certificate = outcome.certificate
            if outcome.created {
                let revocation = await afterDeletion(request.userId, logger: context.logger)
                // Apple usually answers at once: wait briefly so the reply's certificate says
                // `revoked`; otherwise it says `pending` and is re-signed when the retries settle.
                if let id = certificate?.certificateId, certificate?.claims.appleGrant?.status == .pending {
                    await Self.wait(for: revocation, atMost: Self.revocationWait)
                    certificate = try await store.certificate(id: id) ?? certificate
                }
            }
            return AccountsConfirmDeletion.Reply(userId: request.userId, deletedAt: outcome.deletedAt, certificate: certificate)
        }
        server.register(AccountsDeletionCertificate.self) { request, _ in
            guard let certificate = try await store.certificate(id: request.certificateId) else {
                throw BusError(.notFound, "no deletion certificate \(request.certificateId.uuidString.lowercased())")
            }
            return certificate
        }
        server.register(AccountsCancelDeletion.self) { request, context in
            try context.authorize(actingFor: request.userId)
            guard try await store.cancelDeletion(request.userId, request: request.requestId) else {
                throw BusError(.notFound, "no pending deletion \(request.requestId.uuidString.lowercased()) for this user")
            }
            return Empty()
        }
    }

    /// After a deletion committed: publish the event now, erase from Audit, revoke the Apple token
    /// (the returned task: the revocation attempt, which goes on when nobody waits for it).
    ///
    /// The erasure is waited for at most ``erasureWait``: with Audit up it takes milliseconds, so
    /// the reply follows it, but Audit down must not hold a committed deletion's answer: it waited
    /// out the call (10 s, or up to the caller's deadline, so an app through the gateway waited
    /// about 5 s). The attempt goes on unwatched; the sweep and Audit's own consumer of the stream
    /// erase the user if it fails.
    @discardableResult
    func afterDeletion(_ id: UUID, logger: Logger) async -> Task<Void, Never> {
        outbox.committed()
        consents.committed()
        logger.notice("account deleted", metadata: ["user": "\(id)"])
        let revocation = Task { [revoker] in await revoker.sweep() }
        let erasing = Task { [erasure] in await erasure.eraseNow(id) }
        await Self.wait(for: erasing, atMost: Self.erasureWait)
        return revocation
    }

    /// How long confirming a deletion waits for Apple's answer to the revocation.
    static let revocationWait: Duration = .seconds(1)

    /// How long a deletion's answer waits for Audit to erase the user.
    static let erasureWait: Duration = .seconds(1)

    /// Returns when `task` has finished or `limit` has passed, whichever comes first; `task` is
    /// not cancelled.
    static func wait(for task: Task<Void, Never>, atMost limit: Duration) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let pending = LockedValue<CheckedContinuation<Void, Never>?>(continuation)
            let resume: @Sendable () -> Void = {
                let taken = pending.withLock { slot in
                    let taken = slot
                    slot = nil
                    return taken
                }
                taken?.resume()
            }
            Task {
                await task.value
                resume()
            }
            Task {
                try? await Task.sleep(for: limit)
                resume()
            }
        }
    }

    /// What deletion removes and what stays (seed 003 FR-007). The documents counts come from the
    /// Documents service; when it cannot answer they are nil and the description says so.
    func preview(_ id: UUID) async throws -> DeletionPreview {
        guard try await store.user(id: id) != nil else { throw try await store.missing(id) }
        let confirmations = try await store.confirmationCount(id)
        let sessions = try await store.sessionCount(id)
        let usage = await documents.usage(of: id)
        return DeletionPreview(
            userId: id,
            deleted: [
                DeletionItem(category: "profile", description: "Your account: Apple ID link, email, name, username and state.", count: 1),
                DeletionItem(category: "eligibility_confirmations", description: "Your eligibility confirmations.", count: confirmations),
                Self.documentsItem(usage),
                Self.shareLinksItem(usage),
                DeletionItem(category: "sessions", description: "Your sign-ins on every device: you are signed out.", count: sessions),
            ],
            kept: [
                DeletionItem(
                    category: "consent_records",
                    description: "Records that a version of the terms or privacy policy was accepted or declined, kept as legal proof "
                        + "with no link to you: your identity, IP address and device are erased from them.")
            ])
    }
}

extension DeletionHandlers {
    static let notGathered = " How many could not be gathered just now; they are deleted all the same."

    static func documentsItem(_ usage: DocumentsUsage.Reply?) -> DeletionItem {
        guard let usage else { return DeletionItem(category: "documents", description: "Documents you uploaded." + notGathered) }
        return DeletionItem(
            category: "documents", description: "Documents you uploaded (\(usage.documents), \(usage.bytes) bytes).",
            count: usage.documents, bytes: usage.bytes)
    }

    static func shareLinksItem(_ usage: DocumentsUsage.Reply?) -> DeletionItem {
        guard let usage else { return DeletionItem(category: "share_links", description: "Share links to your documents." + notGathered) }
        return DeletionItem(
            category: "share_links",
            description: "Share links to your documents (\(usage.shareLinks); \(usage.activeShareLinks) still usable stop working).",
            count: usage.shareLinks)
    }
}
