import Bus
import Contracts
import Foundation
import ServiceKit

/// The `documents.*` methods besides share links: upload (create, append, status), read, find
/// (get, list, select, position), delete, usage and the data export's listing.
struct DocumentsHandlers: Sendable {
    let store: DocumentsStore
    let settings: DocumentsSettings
    /// Documents in a page that asks for no `limit` (at most ``PageLimit/documents``).
    static let defaultPageSize = 50

    func register(on server: RPCServer) {
        let (store, settings) = (self.store, self.settings)
        let gate = TransferGate(limit: settings.maxTransfers)
        server.register(DocumentsCreate.self) { request, context in
            try context.authorize(actingFor: request.ownerId)
            let new = try MetadataValidation.newDocument(request, maxFileSize: settings.maxFileSize)
            let document = try await store.create(new, quota: settings.userQuota)
            context.logger.info("document created", metadata: ["document": "\(document.id)", "length": "\(document.length)"])
            return document.contract
        }
        server.register(DocumentsAppend.self) { request, context in
            let access = Access(try context.actingFor)
            guard context.attachments.count == 1, let chunk = context.attachments.first, !chunk.isEmpty else {
                throw BusError(.invalidArgument, "documents.append carries exactly one non-empty attachment: the chunk")
            }
            guard chunk.count <= settings.chunkSize else {
                throw BusError(
                    .payloadTooLarge, "a chunk may hold at most \(settings.chunkSize) bytes", details: ["maximum": "\(settings.chunkSize)"])
            }
            guard request.offset >= 0 else { throw BusError(.invalidArgument, "offset must not be negative") }
            let status = try await gate.run { try await store.append(request.id, offset: request.offset, chunk: chunk, access: access) }
            if let document = status.document {
                context.logger.info(
                    "document upload complete",
                    metadata: [
                        "document": "\(document.id)", "length": "\(document.length)", "sha256": "\(document.sha256 ?? "")",
                        "possibly_corrupt": "\(document.possiblyCorrupt)",
                    ])
            }
            return status
        }
        server.register(DocumentsUploadStatus.self) { request, context in
            try await store.uploadStatus(request.id, access: Access(try context.actingFor))
        }
        server.register(
            DocumentsRead.self,
            withAttachments: { request, context in
                guard request.offset >= 0 else { throw BusError(.invalidArgument, "offset must not be negative") }
                guard request.length >= 0, request.length <= settings.chunkSize else {
                    throw BusError(.invalidArgument, "length must be 0 to \(settings.chunkSize) bytes", details: ["maximum": "\(settings.chunkSize)"])
                }
                let access: ReadAccess =
                    if let grant = request.shareGrant {
                        .grant(grant, lifetimeSeconds: settings.shareGrantLifetime.inSeconds)
                    } else {
                        .principal(Access(try context.actingFor))
                    }
                let (document, bytes) = try await gate.run {
                    try await store.read(request.id, offset: request.offset, length: request.length, access: access)
                }
                let reply = DocumentsRead.Reply(
                    id: document.id, offset: request.offset, count: bytes.count, totalLength: document.length, etag: document.sha256 ?? "",
                    fileType: document.fileType)
                return (reply, bytes.isEmpty ? [] : [bytes])
            })
        server.register(DocumentsGet.self) { request, context in
            try await Self.get(request, access: Access(try context.actingFor), store: store).contract
        }
        server.register(DocumentsList.self) { request, context in
            try context.authorize(actingFor: request.filter.ownerId)
            let limit = try PageLimit.documents.validate(request.limit ?? Self.defaultPageSize)
            var after: CollectionKey?
            if let cursor = request.after {
                guard let key = CollectionKey(cursor: cursor) else { throw BusError(.invalidArgument, "after is not a cursor this service gave") }
                after = key
            }
            let (page, next, total) = try await store.list(request.filter, limit: limit, after: after)
            return DocumentsList.Reply(documents: page.map(\.contract), nextCursor: next?.cursor, total: total)
        }
        server.register(DocumentsSelect.self) { request, context in
            try context.authorize(actingFor: request.ownerId)
            let (documents, total) = try await store.select(owner: request.ownerId, request.query)
            return DocumentsSelect.Reply(documents: documents.map(\.contract), total: total)
        }
        server.register(DocumentsExport.self) { request, context in
            try context.authorize(actingFor: request.ownerId)
            let limit = try PageLimit.documents.validate(request.limit ?? Self.defaultPageSize)
            var after: CollectionKey?
            if let cursor = request.after {
                guard let key = CollectionKey(cursor: cursor) else { throw BusError(.invalidArgument, "after is not a cursor this service gave") }
                after = key
            }
            let (page, links, next) = try await store.export(owner: request.ownerId, limit: limit, after: after)
            return DocumentsExport.Reply(documents: page.map(\.contract), shareLinks: links, nextCursor: next?.cursor)
        }
        server.register(DocumentsPosition.self) { request, context in
            try context.authorize(actingFor: request.filter.ownerId)
            return try await store.position(of: request.id, in: request.filter)
        }
        server.register(DocumentsDelete.self) { request, context in
            let links = try await store.delete(request.id, access: Access(try context.actingFor))
            context.logger.notice("document deleted", metadata: ["document": "\(request.id)", "share_links": "\(links)"])
            return DocumentsDelete.Reply(id: request.id, shareLinksDeleted: links)
        }
        server.register(DocumentsUsage.self) { request, context in
            try context.authorize(actingFor: request.userId)
            return try await store.usage(of: request.userId)
        }
    }

    /// `documents.get`: exactly one of id, file URL or reference (seed 002's rule: with `/` it is a
    /// file URL, otherwise an id).
    static func get(_ request: DocumentsGet.Request, access: Access, store: DocumentsStore) async throws -> StoredDocument {
        let given = [request.id != nil, request.fileUrl != nil, request.reference != nil].filter { $0 }.count
        guard given == 1 else { throw BusError(.invalidArgument, "give exactly one of id, fileUrl or reference") }
        if let id = request.id { return try await store.document(id: id, access: access) }
        let text = request.fileUrl ?? request.reference ?? ""
        if request.fileUrl != nil || text.contains("/") {
            guard let fileUrl = FileURL.normalize(text) else { throw BusError(.invalidArgument, "Invalid file URL") }
            return try await store.document(fileUrl: fileUrl, access: access)
        }
        guard let id = UUID(uuidString: text) else { throw BusError(.invalidArgument, "the reference is neither a document id nor a file URL") }
        return try await store.document(id: id, access: access)
    }
}
