import Foundation

/// The tables `/rest/v1` serves, with their columns and types. For those served from a service's
/// SQL, the owning service maps each column to its own SQL expression (a fixed list: nothing else
/// reaches SQL).
public enum RestTables {
    /// `documents` (Documents): the caller's documents, as seed 002's viewer reads them.
    public static let documents = RestTableSchema(
        name: "documents",
        columns: [
            RestColumn("id", .uuid), RestColumn("user_id", .uuid),
            RestColumn("type", .text, allowedValues: DocumentType.allCases.map(\.rawValue), enumName: "document_type"),
            RestColumn("title", .text), RestColumn("description", .text), RestColumn("file_url", .text), RestColumn("file_type", .text),
            RestColumn("file_size", .integer), RestColumn("version", .integer), RestColumn("school_id", .text),
            RestColumn("created_at", .timestamp), RestColumn("sha256", .text),
            RestColumn("bytes_state", .text, allowedValues: ["available", "missing"], enumName: "bytes_state"),
            RestColumn("possibly_corrupt", .boolean), RestColumn("is_video", .boolean), RestColumn("is_image", .boolean),
            RestColumn("is_pdf", .boolean), RestColumn("can_preview", .boolean),
        ])

    /// `legal_acceptances` (Audit's records): the caller's own accepts, acknowledgments and declines.
    public static let legalAcceptances = RestTableSchema(
        name: "legal_acceptances",
        columns: [
            RestColumn("id", .uuid), RestColumn("user_id", .uuid),
            RestColumn("document_type", .text, allowedValues: LegalDocumentType.allCases.map(\.rawValue), enumName: "legal_document_type"),
            RestColumn("version", .text),
            RestColumn("action", .text, allowedValues: AcceptanceAction.allCases.map(\.rawValue), enumName: "acceptance_action"),
            RestColumn("accepted_at", .timestamp), RestColumn("content_sha256", .text),
        ])

    /// `legal_documents` (the gateway's copy of Legal's texts): one row per document type, the
    /// version in effect; `id` is `<type>:<version>`. Its queries run in memory (`InMemoryTable`).
    public static let legalDocuments = RestTableSchema(
        name: "legal_documents",
        columns: [
            RestColumn("id", .text),
            RestColumn("type", .text, allowedValues: LegalDocumentType.allCases.map(\.rawValue), enumName: "legal_document_type"),
            RestColumn("version", .text), RestColumn("content", .text), RestColumn("last_updated", .timestamp),
            RestColumn("effective_at", .timestamp), RestColumn("content_sha256", .text), RestColumn("requires_reacceptance", .boolean),
        ])
}
