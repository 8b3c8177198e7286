import Bus
import Contracts
import Foundation
import ServiceKit

/// Wires the Audit service into a running ``BusServiceContext``: the version catalog fed by
/// Legal's events, the group committer, the follower of Accounts' consent stream, the
/// checkpointer and the handlers.
public enum AuditService {
    public static func configure(_ context: BusServiceContext, settings: AuditSettings) async throws {
        let signer = ReceiptSigner(privateKey: settings.signingKey, previousPublicKeys: settings.previousPublicKeys)
        let subjects = SubjectCache(lifetime: settings.subjectCacheLifetime)
        let erasure = Erasure(pool: context.pool, subjects: subjects)
        let catalog = VersionCatalog(pool: context.pool) { try await context.client(for: .legal) }
        try await context.consumeEvents(from: .legal) { envelope, db in try catalog.apply(envelope, on: db) }
        // A deleted account's records are pseudonymised even if Accounts' direct call was lost.
        try await context.consumeEvents(from: .accounts) { envelope, db in try erasure.apply(envelope, on: db) }
        let committer = GroupCommitter(
            pool: context.pool, chains: settings.chainOffset..<(settings.chainOffset + settings.writers), maximumBatch: settings.maximumBatch,
            signer: signer, subjects: subjects, logger: context.logger)
        context.runtime.addService(committer)
        // Acts reach Audit through Accounts' consent stream; its first chain takes them.
        let follower = ConsentFollower(
            pool: context.pool, accounts: { try await context.client(for: .accounts) }, catalog: catalog, chain: settings.chainOffset,
            subjects: subjects, logger: context.logger)
        context.runtime.addService(follower)
        context.runtime.addService(
            Checkpointer(pool: context.pool, signer: signer, interval: settings.checkpointInterval, logger: context.logger))
        AuditHandlers(
            catalog: catalog, committer: committer, reader: AuditReader(pool: context.pool, catalog: catalog),
            verifier: ChainVerifier(pool: context.pool, signer: signer), erasure: erasure, signer: signer, follower: follower
        ).register(on: context.server)
    }
}
