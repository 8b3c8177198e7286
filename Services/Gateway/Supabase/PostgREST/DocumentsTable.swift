import Bus
import Contracts
import Foundation
import GatewayService

/// The `documents` table as Supabase clients see it (seed 002's viewer:
/// `.from("documents").select("id, title, file_url, file_type, type").eq("id", id).single()`):
/// the caller's own documents only, as row-level security would have it (the anon key sees none).
///
/// Columns: `id`, `user_id`, `type`, `title`, `description`, `file_url` (`documents/<id>/<name>`:
/// the Storage bucket and path), `file_type`, `file_size`, `version`, `school_id`, `created_at`,
/// `sha256`, `bytes_state`, `possibly_corrupt`, `is_video`, `is_image`, `is_pdf`, `can_preview`.
enum DocumentsTable {
    static let schema = RestTables.documents

    static func row(_ document: Document) -> [String: JSONValue] {
        let optional = { (value: String?) in value.map { JSONValue.string($0) } ?? .null }
        return [
            "id": .string(document.id.uuidString.lowercased()), "user_id": .string(document.ownerId.uuidString.lowercased()),
            "type": .string(document.type.rawValue), "title": .string(document.title), "description": optional(document.description),
            "file_url": .string(document.fileUrl), "file_type": optional(document.fileType), "file_size": .int(document.length),
            "version": .int(Int64(document.version)), "school_id": optional(document.schoolId),
            "created_at": .string(Timestamp.iso(document.createdAt)),
            "sha256": optional(document.sha256), "bytes_state": .string(document.bytesState.rawValue),
            "possibly_corrupt": .bool(document.possiblyCorrupt),
            "is_video": .bool(document.isVideo), "is_image": .bool(document.isImage), "is_pdf": .bool(document.isPDF),
            "can_preview": .bool(document.canPreview),
        ]
    }

    /// The caller's rows the query selects, from Documents' SQL (`documents.select`): only the
    /// rows of the answer cross the bus, and `total` when `query.count` asked for it.
    static func select(_ query: RestQuery, user: UUID, services: ServiceClients, context: GatewayContext) async throws -> (
        rows: [[String: JSONValue]], total: Int?
    ) {
        let reply = try await services.call(
            .documents, DocumentsSelect.self, .init(ownerId: user, query: query), principal: Credential.principal(for: user), context: context)
        return (reply.documents.map(row), reply.total)
    }
}
