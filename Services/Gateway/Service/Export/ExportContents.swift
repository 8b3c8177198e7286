import Bus
import Contracts
import Foundation

/// What a data export holds before any byte is sent: the Accounts part, every Audit record with
/// its signed receipt and the key to check them, and every document's metadata and share links,
/// each gathered from its own service over the bus as the user (`user:<id>`), page by page.
/// Metadata only: the document bytes are read while the archive is written.
package struct ExportContents: Sendable {
    var account: AccountsExport.Reply
    var records: [AcceptanceRecord]
    var publicKey: String
    var documents: [Document]
    var shareLinks: [ShareLink]

    /// Pages asked of Audit and Documents (their largest).
    static let auditPage = 1000
    static let documentsPage = 200

    static func gather(for user: UUID, services: ServiceClients, context: GatewayContext) async throws -> ExportContents {
        let principal = Credential.principal(for: user)
        async let account = services.call(.accounts, AccountsExport.self, .init(userId: user), principal: principal, context: context)
        async let key = services.call(.audit, AuditPublicKey.self, Empty(), principal: principal, context: context)
        var records: [AcceptanceRecord] = []
        var before: String?
        repeat {
            let page = try await services.call(
                .audit, AuditHistory.self, .init(userId: user, limit: auditPage, before: before), principal: principal, context: context)
            records += page.records
            before = page.next
        } while before != nil
        var documents: [Document] = []
        var links: [ShareLink] = []
        var after: String?
        repeat {
            let page = try await services.call(
                .documents, DocumentsExport.self, .init(ownerId: user, limit: documentsPage, after: after), principal: principal, context: context)
            documents += page.documents
            links += page.shareLinks
            after = page.nextCursor
        } while after != nil
        return ExportContents(
            account: try await account, records: records, publicKey: try await key.publicKey, documents: documents, shareLinks: links)
    }

    /// The archive path of a document's bytes: `documents/<id>/<file name>`, the document's file
    /// URL (Documents already reduces names to safe characters), with anything that could leave
    /// the folder or confuse an unpacker replaced again here rather than trusted.
    static func path(of document: Document) -> String {
        let raw = document.fileUrl.split(separator: "/").last.map(String.init) ?? ""
        var name = String(
            raw.unicodeScalars.map { scalar -> Character in
                scalar == "\\" || scalar == ":" || scalar.properties.generalCategory == .control ? "_" : Character(scalar)
            })
        if name.isEmpty || name == "." || name == ".." { name = "file" }
        while name.utf8.count > 200 { name.removeFirst() }
        return "documents/\(document.id.uuidString.lowercased())/\(name)"
    }
}
