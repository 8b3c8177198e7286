import Bus
import Contracts
import Foundation
import Identity
import Postgres
import ServiceKit

/// The Accounts service as ``BusServiceMain`` runs it: name and schema `accounts`, the system's
/// default addresses for it (RPC 5552, events 5652, health 5752), and its migrations, shipped as
/// resource files (`Migrations/NNNN_name.sql`, numbered from 0100).
public enum AccountsServiceDescription: ServiceDescription {
    public static let name = ServiceName.accounts.rawValue
    public static var defaultRPCBind: String { ServiceName.accounts.defaultRPCEndpoint }
    public static var defaultEventsBind: String { ServiceName.accounts.defaultEventsEndpoint }
    public static var defaultHealthPort: Int { ServiceName.accounts.defaultHealthPort }

    public static func migrations() throws -> [Migration] {
        guard let url = Bundle.module.url(forResource: "Migrations", withExtension: nil) else {
            throw CocoaError(.fileNoSuchFile, userInfo: [NSFilePathErrorKey: "Migrations in the AccountsService resource bundle"])
        }
        return try Migration.load(directory: url)
    }

    /// Registers the handlers on a running context. Called from `main` inside
    /// ``BusServiceMain/run(_:settings:configure:)``.
    public static func configure(_ context: BusServiceContext, settings: AccountsSettings) async throws {
        let peers = Peers(legal: { try await context.client(for: .legal) }, audit: { try await context.client(for: .audit) })
        let store = AccountsStore(pool: context.pool, schema: context.name)
        let legalEvents = try await EventSubscriber.connect(
            endpoints: context.bus.peers[.legal]?.events ?? [ServiceName.legal.defaultEventsEndpoint], topics: [LegalEvents.published],
            security: try context.bus.clientSecurity(for: .legal), logger: context.logger)
        context.runtime.addService(
            TermsCatalogFollower(catalog: peers.terms, events: legalEvents, tickInterval: .seconds(5), logger: context.logger))
        let signal = ConsentSignal()
        let backlog = ConsentBacklog(
            store: store, limit: settings.consents.backlogLimit, interval: settings.consents.backlogInterval, logger: context.logger)
        context.runtime.addService(backlog)
        ConsentsSinceHandler(store: store, signal: signal).register(on: context.server)
        let chained = ChainWait(store: store, limit: settings.consents.receiptWait)
        AccountsHandlers(
            store: store, rules: settings.rules, peers: peers, outbox: context.outbox, backlog: backlog, chained: chained, signal: signal
        ).register(on: context.server)
        let erasure = AuditErasure(store: store, audit: peers.audit, interval: settings.erasureSweepInterval, logger: context.logger)
        context.runtime.addService(erasure)
        let documentsClient: (@Sendable () async throws -> RPCClient)? =
            settings.documentsUsageTimeout == nil ? nil : { @Sendable in try await context.client(for: .documents) }
        let documents = DocumentsLookup(client: documentsClient, timeout: settings.documentsUsageTimeout ?? .seconds(1), logger: context.logger)
        let certifier = DeletionCertifier(keys: settings.certificateKeys)
        let revoker = AppleTokenRevoker(
            store: store, certifier: certifier, apple: settings.appleTokens, backoff: settings.appleRevokeBackoff,
            interval: settings.appleRevokeSweepInterval,
            logger: context.logger)
        context.runtime.addService(revoker)
        if let apple = settings.appleTokens {
            context.runtime.addService(
                AppleTokenResealer(store: store, box: apple.box, interval: AppleTokenResealer.defaultInterval, logger: context.logger))
        }
        let deletion = DeletionHandlers(
            store: store, outbox: context.outbox, erasure: erasure, documents: documents, certifier: certifier, revoker: revoker,
            consents: signal)
        deletion.register(on: context.server)
        let appleKeys = AppleKeyCache(source: settings.appleKeys, logger: context.logger)
        SessionHandlers(
            store: store, signUp: SignUp(store: store, rules: settings.rules, peers: peers, signal: signal, chained: chained),
            apple: AppleIdentityVerifier(audiences: [settings.appleBundleID], keys: appleKeys, logger: context.logger),
            tokens: SessionTokens(keys: settings.sessionKeys), lifetimeSeconds: Int(settings.sessionLifetime.components.seconds),
            appleTokens: settings.appleTokens, outbox: context.outbox
        ).register(on: context.server)
        AppleNotificationHandler(
            store: store, verifier: AppleNotificationVerifier(audiences: [settings.appleBundleID], keys: appleKeys),
            certifier: certifier, outbox: context.outbox, deletion: deletion
        ).register(on: context.server)
        PublicKeysHandler(sessionKeys: settings.sessionKeys, certificateKeys: settings.certificateKeys).register(on: context.server)
        if settings.appleTokens == nil {
            context.logger.notice("apple token endpoints not configured: authorization codes are not exchanged")
        }
        context.logger.notice(
            "eligibility rules in force",
            metadata: [
                "version": "\(settings.rules.version)", "restricted": "\(settings.rules.restrictedStates.joined(separator: ","))",
            ])
    }
}
