import Bus
import Contracts
import Foundation
import GatewayService
import Hummingbird

/// The Supabase Storage subset over the Documents service, so `supabase.storage.from_("documents")`
/// works unchanged. There is one bucket, `documents`; an object's path is the part of a
/// document's `file_url` after `documents/` (`<id>/<file name>`).
///
/// - `GET /storage/v1/object/{bucket}/{path}` (and `/object/authenticated/…`): the caller's own
///   object, as the owner (session token as Bearer); with Range, ETag, 304 like the native route.
/// - `GET /storage/v1/object/public/{bucket}/{path}`: the bucket is private (a user's recruiting
///   documents are never public), so this answers what Supabase answers for a private bucket's
///   object: 404 "Object not found", whatever the path.
/// - `POST /storage/v1/object/sign/{bucket}/{path}` `{"expiresIn": N}`: a signed URL backed by a
///   Documents share link (expires after N seconds, revocable from the share-link list, every use
///   logged), `{"signedURL": "/object/sign/documents/<path>?token=<share token>"}`.
///   `signedURL` stays relative to the Storage URL: the SDKs put their own base in front.
/// - `GET /storage/v1/object/sign/{bucket}/{path}?token=…`: the signed download, no sign-in; the
///   token must be a link to that very object (404 otherwise), 410 once expired or revoked. The
///   same route serves documents' `file_url` links (``FileLinks``: token `f1.…`), which count no
///   share-link use and stop working with the document.
struct StorageRoutes {
    let services: ServiceClients
    let authenticator: Authenticator
    let bytes: DocumentBytes
    let maxBodyBytes: Int
    let fileLinks: FileLinks

    static let bucket = "documents"
    /// Where the family's routes are (its router group's path).
    static let prefix = "/storage/v1"

    struct SignBody: Decodable {
        let expiresIn: Int

        enum CodingKeys: String, CodingKey { case expiresIn }

        // storage3 (Python) sends the number as a string.
        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            if let number = try? container.decode(Int.self, forKey: .expiresIn) {
                expiresIn = number
            } else if let text = try? container.decode(String.self, forKey: .expiresIn), let number = Int(text) {
                expiresIn = number
            } else {
                throw DecodingError.dataCorruptedError(forKey: .expiresIn, in: container, debugDescription: "expiresIn must be a number of seconds")
            }
        }
    }

    struct SignedURL: Encodable {
        let signedURL: String
    }

    func register(on family: RouteFamily) {
        // Reading the caller's objects and signing URLs for them need the terms in effect accepted; the signed
        // download (no sign-in) and the public URL do not.
        let termsAccepted = family.signedIn(by: authenticator, termsAccepted: true)
        for path in ["/object", "/object/authenticated"] {
            termsAccepted.add(
                .get, path + "/:bucket/**", "Storage: download the caller's object (Range, ETag; ?download for an attachment).",
                public: false, docs: RouteDocs(query: [("download", RouteDocs.text)], headers: RouteDocs.rangeHeaders, answer: .bytes)
            ) { request, context in
                let user = try context.signedIn().userId
                let fileUrl = try Self.fileUrl(context)
                let document = try await services.call(
                    .documents, DocumentsGet.self, .init(fileUrl: fileUrl), principal: Credential.principal(for: user), context: context)
                return try await bytes.response(
                    for: document, reader: .init(principal: Credential.principal(for: user), grant: nil), request: request, context: context)
            }
        }
        family.add(
            .get, "/object/public/:bucket/**",
            "Storage public URL: the documents bucket is private, so always 404 Object not found.", public: true
        ) { _, _ in
            throw BusError(.notFound, "Object not found")
        }
        termsAccepted.add(
            .post, "/object/sign/:bucket/**",
            "Storage: a signed URL for the caller's object ({\"expiresIn\": seconds}), backed by a share link.", public: false
        ) { request, context in
            let user = try context.signedIn().userId
            let fileUrl = try Self.fileUrl(context)
            let body = try await JSONBodies.decode(SignBody.self, from: request, limit: maxBodyBytes)
            let principal = Credential.principal(for: user)
            let document = try await services.call(.documents, DocumentsGet.self, .init(fileUrl: fileUrl), principal: principal, context: context)
            let created = try await services.call(
                .documents, DocumentsShareCreate.self, .init(documentId: document.id, expiresInSeconds: body.expiresIn), principal: principal,
                context: context)
            let token = created.token.addingPercentEncoding(withAllowedCharacters: .alphanumerics.union(.init(charactersIn: "-_"))) ?? created.token
            return try JSONBodies.response(SignedURL(signedURL: "/object/sign/\(fileUrl)?token=\(token)"))
        }
        family.add(
            .get, "/object/sign/:bucket/**",
            "Storage: the signed download (a signed URL's token, or a document's file_url; no sign-in; Range, ETag).", public: true,
            docs: RouteDocs(
                query: [("token", RouteDocs.text), ("download", RouteDocs.text)], headers: RouteDocs.rangeHeaders, answer: .bytes)
        ) { request, context in
            let fileUrl = try Self.fileUrl(context)
            guard let token = try DocumentRoutes.query(request)["token"], !token.isEmpty else {
                throw BusError(.invalidArgument, "the signed URL has no token")
            }
            if FileLinks.isFileToken(token) { return try await fileLink(fileUrl: fileUrl, token: token, request: request, context: context) }
            let opened = try await services.call(
                .documents, DocumentsShareOpen.self, .init(token: token, clientIP: context.clientIP, byteRange: request.headers[.range] != nil),
                principal: .anonymous, context: context)
            guard opened.document.fileUrl == fileUrl else { throw BusError(.notFound, "Object not found") }
            return try await bytes.response(
                for: opened.document, reader: .init(principal: .anonymous, grant: opened.grant), request: request, context: context)
        }
    }

    /// A document's `file_url` download: the document is looked up on every request (gone once
    /// deleted, with its account too), then the token's MAC over its id, owner and expiry is
    /// checked; the bytes are read as the owner. Cached no longer than the link lives.
    func fileLink(fileUrl: String, token: String, request: Request, context: GatewayContext) async throws -> Response {
        let document: Document
        do {
            document = try await services.call(
                .documents, DocumentsGet.self, .init(fileUrl: fileUrl), principal: .service("gateway"), context: context)
        } catch let error as BusError where error.code == .notFound || error.code == .invalidArgument {
            throw BusError(.notFound, "Object not found")
        }
        switch fileLinks.verify(token, for: document) {
        case .invalid: throw BusError(.notFound, "Object not found")
        case .expired: throw BusError(.gone, "the link expired: read the document again for a fresh file_url")
        case .valid(let expires):
            let remaining = Int(max(0, expires - Int64(Date().timeIntervalSince1970)))
            return try await bytes.response(
                for: document, reader: .init(principal: Credential.principal(for: document.ownerId), grant: nil), request: request, context: context,
                maxAge: remaining)
        }
    }

    /// `documents/<path>` from the route's bucket and path (404 for any other bucket).
    static func fileUrl(_ context: GatewayContext) throws -> String {
        guard context.pathParameter("bucket") == bucket else { throw BusError(.notFound, "Bucket not found") }
        let path = context.parameters.getCatchAll().map { String($0).removingPercentEncoding ?? String($0) }
        guard !path.isEmpty else { throw BusError(.notFound, "Object not found") }
        return ([bucket] + path).joined(separator: "/")
    }
}
