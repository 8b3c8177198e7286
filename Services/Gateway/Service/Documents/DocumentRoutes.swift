import Bus
import Contracts
import Foundation
import Hummingbird

/// The native documents API under `/api` (seed 002's viewer and its collections): create, get by
/// id or file URL, list, position, delete, the bytes, and share links. Every call acts as the
/// signed-in user (`user:<id>`), so Documents' own rule applies: another user's document is
/// `not_found`, another user's collection `forbidden`. The shared-link download is public: the
/// link's token is the credential. Every route but deleting a document and revoking a share link
/// needs the terms in effect accepted (``TermsGate``): erasing and withdrawing stay open.
///
/// Every URL answered is absolute (``PublicBaseURL``): a document's `fileUrl` is a signed,
/// expiring download link (``FileLinks``), a share link's `url` and an upload's `Location` start
/// with the public base.
package struct DocumentRoutes {
    let services: ServiceClients
    let authenticator: Authenticator
    let bytes: DocumentBytes
    let maxBodyBytes: Int
    let publicBase: PublicBaseURL
    let fileLinks: FileLinks

    struct CreateBody: Decodable {
        let type: DocumentType
        let title: String
        let description: String?
        let fileType: String?
        let schoolId: String?
        let fileName: String?
        let version: Int?
        let length: Int64
    }

    struct ShareBody: Decodable {
        let expiresInSeconds: Int
        let maxUses: Int?
    }

    struct CreatedShareLink: Encodable {
        let link: ShareLink
        let token: String
        /// Where anyone holding the token downloads the document (no sign-in).
        let url: String
    }

    func register(on family: RouteFamily) {
        // Every route acts for a signed-in user who accepted the terms in effect, but deleting a document or withdrawing
        // a share (erasing one's own data stays open to a user who has not accepted them) and the public share download.
        let termsAccepted = family.signedIn(by: authenticator, termsAccepted: true)
        let signedIn = family.signedIn(by: authenticator, termsAccepted: false)
        termsAccepted.add(
            .post, "/api/documents", "Create a document (metadata and length); upload its bytes with tus PATCH at Location.", public: false,
            docs: RouteDocs(answer: .json(status: 201))
        ) { request, context in
            let user = try context.signedIn().userId
            let body = try await JSONBodies.decode(CreateBody.self, from: request, limit: maxBodyBytes)
            let document = try await services.call(
                .documents, DocumentsCreate.self,
                .init(
                    ownerId: user, type: body.type, title: body.title, description: body.description, fileType: body.fileType,
                    schoolId: body.schoolId, fileName: body.fileName, version: body.version, length: body.length),
                principal: Credential.principal(for: user), context: context)
            let base = publicBase.base(for: request, context: context)
            return try JSONBodies.response(
                fileLinks.presented(document, base: base), status: .created, headers: [.location: base + TusRoutes.location(of: document.id)])
        }
        termsAccepted.add(
            .get, "/api/documents", "The caller's documents, newest first (type, schoolId filters; limit, after cursor).", public: false,
            docs: RouteDocs(
                query: Self.collectionFilters + [
                    ("limit", RouteDocs.integer(minimum: 1, maximum: PageLimit.documents.maximum)), ("after", RouteDocs.text),
                ])
        ) { request, context in
            let user = try context.signedIn().userId
            let query = try Self.query(request)
            let limit = try query["limit"].map { try PageLimit.documents.validate(text: $0) }
            let filter = try Self.filter(query, owner: user)
            var page = try await services.call(
                .documents, DocumentsList.self, .init(filter: filter, limit: limit, after: query["after"]),
                principal: Credential.principal(for: user), context: context)
            let base = publicBase.base(for: request, context: context)
            page.documents = page.documents.map { fileLinks.presented($0, base: base) }
            return try JSONBodies.response(page)
        }
        termsAccepted.add(.get, "/api/documents/:reference", "One document by id, or by file URL (percent-encoded; contains /).", public: false) {
            request, context in
            try JSONBodies.response(fileLinks.presented(try await find(context).1, base: publicBase.base(for: request, context: context)))
        }
        termsAccepted.add(
            .get, "/api/documents/:reference/position",
            "Where the document stands in its collection (type, schoolId filters): position, total, previous and next.", public: false,
            docs: RouteDocs(query: Self.collectionFilters)
        ) { request, context in
            let (user, document) = try await find(context)
            let filter = try Self.filter(try Self.query(request), owner: user)
            return try JSONBodies.response(
                try await services.call(
                    .documents, DocumentsPosition.self, .init(id: document.id, filter: filter), principal: Credential.principal(for: user),
                    context: context))
        }
        signedIn.add(.delete, "/api/documents/:reference", "Delete the document, its bytes and its share links.", public: false) {
            request, context in
            // Erasing one's own data stays open to a user who has not accepted the terms.
            let (user, id) = try await identify(context)
            _ = try await services.call(.documents, DocumentsDelete.self, .init(id: id), principal: Credential.principal(for: user), context: context)
            return Response(status: .noContent)
        }
        termsAccepted.add(
            .get, "/api/documents/:reference/content", "The bytes (Range → 206, ETag/If-None-Match → 304, ?download for an attachment).",
            public: false, docs: RouteDocs(query: [("download", RouteDocs.text)], headers: RouteDocs.rangeHeaders, answer: .bytes)
        ) { request, context in
            let (user, document) = try await find(context)
            return try await bytes.response(
                for: document, reader: .init(principal: Credential.principal(for: user), grant: nil), request: request, context: context)
        }
        termsAccepted.add(
            .post, "/api/documents/:reference/share-links", "Create a share link (expiresInSeconds, maxUses); the token is shown once.",
            public: false, docs: RouteDocs(answer: .json(status: 201))
        ) { request, context in
            let (user, id) = try await identify(context)
            let body = try await JSONBodies.decode(ShareBody.self, from: request, limit: maxBodyBytes)
            let created = try await services.call(
                .documents, DocumentsShareCreate.self, .init(documentId: id, expiresInSeconds: body.expiresInSeconds, maxUses: body.maxUses),
                principal: Credential.principal(for: user), context: context)
            return try JSONBodies.response(
                CreatedShareLink(
                    link: created.link, token: created.token, url: publicBase.base(for: request, context: context) + "/api/shared/\(created.token)"),
                status: .created)
        }
        termsAccepted.add(.get, "/api/documents/:reference/share-links", "The document's share links with their use logs.", public: false) {
            request, context in
            let (user, id) = try await identify(context)
            return try JSONBodies.response(
                try await services.call(
                    .documents, DocumentsShareList.self, .init(documentId: id), principal: Credential.principal(for: user), context: context))
        }
        signedIn.add(.delete, "/api/share-links/:linkId", "Revoke a share link: it stops working at once.", public: false) {
            request, context in
            // Withdrawing a share stays open to a user who has not accepted the terms.
            let user = try context.signedIn().userId
            guard let linkId = MessageID.parse(context.pathParameter("linkId") ?? "") else {
                throw BusError(.invalidArgument, "the link id is not a UUID")
            }
            _ = try await services.call(
                .documents, DocumentsShareRevoke.self, .init(linkId: linkId), principal: Credential.principal(for: user), context: context)
            return Response(status: .noContent)
        }
        family.add(
            .get, "/api/shared/:token",
            "Download through a share link (no sign-in; one use per download or playback: a Range request from the same client continues its use; 410 once expired, revoked or used up).",
            public: true, docs: RouteDocs(headers: RouteDocs.rangeHeaders, answer: .bytes)
        ) { request, context in
            let opened = try await services.call(
                .documents, DocumentsShareOpen.self,
                .init(token: context.pathParameter("token") ?? "", clientIP: context.clientIP, byteRange: request.headers[.range] != nil),
                principal: .anonymous, context: context)
            return try await bytes.response(
                for: opened.document, reader: .init(principal: .anonymous, grant: opened.grant), request: request, context: context)
        }
    }

    /// The document `:reference` names (an id, or a file URL when it contains `/`), as the caller.
    private func find(_ context: GatewayContext) async throws -> (UUID, Document) {
        let user = try context.signedIn().userId
        let reference = context.pathParameter("reference") ?? ""
        let document = try await services.call(
            .documents, DocumentsGet.self, .init(reference: reference), principal: Credential.principal(for: user), context: context)
        return (user, document)
    }

    /// The caller and the id `:reference` names, looking a file URL up first.
    private func identify(_ context: GatewayContext) async throws -> (UUID, UUID) {
        if let id = MessageID.parse(context.pathParameter("reference") ?? "") { return (try context.signedIn().userId, id) }
        let (user, document) = try await find(context)
        return (user, document.id)
    }

    /// The collection filters of the list and of a document's position: a document type, a school.
    static let collectionFilters: [RouteDocs.Parameter] = [
        ("type", RouteDocs.oneOf(DocumentType.allCases.map(\.rawValue))), ("schoolId", RouteDocs.text),
    ]

    /// The query string's parameters, percent-decoded. Bytes that are not UTF-8 (or a stray `%`)
    /// are `invalid_argument`: filtering on the undecoded text instead would silently match nothing.
    package static func query(_ request: Request) throws -> [String: String] {
        var result: [String: String] = [:]
        for pair in (request.uri.query ?? "").split(separator: "&") {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            let decode = { (text: Substring) throws in
                guard let decoded = String(text).replacingOccurrences(of: "+", with: " ").removingPercentEncoding else {
                    throw BusError(.invalidArgument, "the query string has invalid percent-encoding or UTF-8")
                }
                return decoded
            }
            result[try decode(parts[0])] = parts.count > 1 ? try decode(parts[1]) : ""
        }
        return result
    }

    static func filter(_ query: [String: String], owner: UUID) throws -> CollectionFilter {
        let type = try query["type"].map { text in
            guard let type = DocumentType(rawValue: text) else { throw BusError(.invalidArgument, "unknown document type \(text)") }
            return type
        }
        return CollectionFilter(ownerId: owner, type: type, schoolId: query["schoolId"])
    }
}
