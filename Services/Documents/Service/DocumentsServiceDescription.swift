import Foundation
import ObjectStorage
import Postgres
import ServiceKit

/// The Documents service as ``BusServiceMain`` runs it: name and schema `documents`, the system's
/// default addresses for it (RPC 5553, events 5653, health 5753), and its migrations, shipped as
/// resource files (`Migrations/NNNN_name.sql`, numbered from 0100).
public enum DocumentsServiceDescription: ServiceDescription {
    public static let name = ServiceName.documents.rawValue
    public static var defaultRPCBind: String { ServiceName.documents.defaultRPCEndpoint }
    public static var defaultEventsBind: String { ServiceName.documents.defaultEventsEndpoint }
    public static var defaultHealthPort: Int { ServiceName.documents.defaultHealthPort }

    public static func migrations() throws -> [Migration] {
        guard let url = Bundle.module.url(forResource: "Migrations", withExtension: nil) else {
            throw CocoaError(.fileNoSuchFile, userInfo: [NSFilePathErrorKey: "Migrations in the DocumentsService resource bundle"])
        }
        return try Migration.load(directory: url)
    }

    /// Registers the handlers and the `account.deleted` consumer on a running context. Called
    /// from `main` inside ``BusServiceMain/run(_:settings:configure:)``.
    public static func configure(_ context: BusServiceContext, settings: DocumentsSettings) async throws {
        let client = try await objectStore(settings, context: context)
        let store = DocumentsStore(
            pool: context.pool, schema: context.name, chunkSize: settings.chunkSize, uploadExpiry: settings.uploadExpiry,
            newUploads: settings.storage, objectStore: client, partSize: settings.s3PartSize)
        DocumentsHandlers(store: store, settings: settings).register(on: context.server)
        ShareHandlers(store: store, settings: settings).register(on: context.server)
        context.runtime.addService(
            AbandonedUploadSweeper(
                store: store, expiry: settings.uploadExpiry, interval: settings.uploadSweepInterval, logger: context.logger))
        context.runtime.addService(
            LargeObjectSweeper(
                store: store, batch: settings.largeObjectUnlinkBatch, interval: .seconds(1), logger: context.logger))
        if let client {
            context.runtime.addService(
                ObjectRemovalSweeper(
                    pool: context.pool, client: client, removals: store.objectRemovals, interval: .seconds(1), logger: context.logger))
            context.runtime.addService(
                OrphanObjectSweeper(
                    pool: context.pool, client: client, documents: store.documents, grace: settings.s3OrphanGrace,
                    interval: settings.s3OrphanSweepInterval, logger: context.logger))
        }
        let cleanup = AccountCleanup(store: store, logger: context.logger)
        try await context.consumeEvents(from: .accounts) { event, db in try cleanup.apply(event, on: db) }
        context.logger.notice(
            "documents limits",
            metadata: [
                "max_file_size": "\(settings.maxFileSize)", "user_quota": "\(settings.userQuota)", "chunk_size": "\(settings.chunkSize)",
                "storage": "\(settings.storage.rawValue)",
            ])
    }

    /// The bucket's client, proven usable before any request is served: bad credentials, a missing
    /// bucket or an unreachable store stop the service at start with the store's own answer, not
    /// at the first upload. Nil without `DOCUMENTS_S3_*`.
    static func objectStore(_ settings: DocumentsSettings, context: BusServiceContext) async throws -> S3Client? {
        guard let configuration = settings.s3 else { return nil }
        let client = try S3Client(configuration: configuration, logger: context.logger)
        do { try await client.checkBucket() } catch {
            throw DocumentsStartError(
                message: "object storage is not usable (endpoint \(configuration.endpoint.absoluteString), bucket \(configuration.bucket)): \(error)")
        }
        context.logger.notice(
            "object storage reachable",
            metadata: [
                "endpoint": "\(configuration.endpoint.absoluteString)", "bucket": "\(configuration.bucket)", "part_size": "\(settings.s3PartSize)",
            ])
        return client
    }
}

/// Why Documents could not start (its message says what to fix).
struct DocumentsStartError: Error, CustomStringConvertible {
    let message: String
    var description: String { message }
}
