import Bus
import Contracts
import Foundation

/// The `documents` table as Supabase clients see it (seed 002's viewer:
/// `.from("documents").select("id, title, file_url, file_type, type").eq("id", id).single()`):
/// the caller's own documents only, as row-level security would have it (the anon key sees none).
///
/// Columns: `id`, `user_id`, `type`, `title`, `description`, `file_url` (`documents/<id>/<name>`:
/// the Storage bucket and path), `file_type`, `file_size`, `version`, `school_id`, `created_at`,
/// `sha256`, `bytes_state`, `possibly_corrupt`, `is_video`, `is_image`, `is_pdf`, `can_preview`.
enum DocumentsTable {
    static let columns = [
        "id", "user_id", "type", "title", "description", "file_url", "file_type", "file_size", "version", "school_id", "created_at",
        "sha256", "bytes_state", "possibly_corrupt", "is_video", "is_image", "is_pdf", "can_preview",
    ]
    /// Columns holding UUIDs: their filter values are compared case-insensitively, like `uuid`.
    static let uuidColumns: Set<String> = ["id", "user_id"]

    static func row(_ document: Document) -> [String: JSONValue] {
        let optional = { (value: String?) in value.map { JSONValue.string($0) } ?? .null }
        return [
            "id": .string(document.id.uuidString.lowercased()), "user_id": .string(document.ownerId.uuidString.lowercased()),
            "type": .string(document.type.rawValue), "title": .string(document.title), "description": optional(document.description),
            "file_url": .string(document.fileUrl), "file_type": optional(document.fileType), "file_size": .int(document.length),
            "version": .int(Int64(document.version)), "school_id": optional(document.schoolId), "created_at": .string(Timestamp.iso(document.createdAt)),
            "sha256": optional(document.sha256), "bytes_state": .string(document.bytesState.rawValue), "possibly_corrupt": .bool(document.possiblyCorrupt),
            "is_video": .bool(document.isVideo), "is_image": .bool(document.isImage), "is_pdf": .bool(document.isPDF), "can_preview": .bool(document.canPreview),
        ]
    }

    /// The query with UUID filter values lowercased; 22P02 for a value that is not a UUID.
    static func normalized(_ query: PostgRESTQuery) throws(PostgRESTError) -> PostgRESTQuery {
        var query = query
        for index in query.filters.indices where uuidColumns.contains(query.filters[index].column) {
            guard let id = UUID(uuidString: query.filters[index].value) else {
                throw PostgRESTError(status: .badRequest, code: "22P02", message: "invalid input syntax for type uuid: \"\(query.filters[index].value)\"")
            }
            query.filters[index].value = id.uuidString.lowercased()
        }
        return query
    }

    /// The caller's rows the query can match: one `documents.get` for an `id=eq.` filter, else
    /// the caller's collection (with `type`/`school_id` filters passed on), page by page.
    static func rows(for query: PostgRESTQuery, user: UUID, services: ServiceClients, context: GatewayContext) async throws -> [[String: JSONValue]] {
        let principal = Credential.principal(for: user)
        if let id = query.filters.first(where: { $0.column == "id" }).flatMap({ UUID(uuidString: $0.value) }) {
            do {
                return [row(try await services.call(.documents, DocumentsGet.self, .init(id: id), principal: principal, context: context))]
            } catch let error as BusError where error.code == .notFound {
                return []
            }
        }
        let type = query.filters.first { $0.column == "type" }.map(\.value)
        if let type, DocumentType(rawValue: type) == nil {
            throw PostgRESTError(status: .badRequest, code: "22P02", message: "invalid input value for enum document_type: \"\(type)\"")
        }
        let filter = CollectionFilter(ownerId: user, type: type.flatMap(DocumentType.init(rawValue:)), schoolId: query.filters.first { $0.column == "school_id" }?.value)
        var rows: [[String: JSONValue]] = []
        var after: String?
        // At most 50 pages of 200 (Documents' largest page): 10,000 rows.
        for _ in 0..<50 {
            let page = try await services.call(.documents, DocumentsList.self, .init(filter: filter, limit: 200, after: after), principal: principal, context: context)
            rows += page.documents.map(row)
            guard let next = page.nextCursor else { break }
            after = next
        }
        return rows
    }
}
