import Bus
import CivilCalendar
import Contracts
import Foundation
import HTTPTypes
import Hummingbird

/// Resumable uploads with tus 1.0.0 (core, creation, expiration, termination), the protocol of
/// iOS TUSKit and `tuspy`, mapped onto Documents' upload API:
///
/// - `OPTIONS /api/uploads` → `Tus-Version`, `Tus-Extension`, `Tus-Max-Size` (no sign-in).
/// - `POST /api/uploads` (`Upload-Length`, `Upload-Metadata`) → `documents.create` → 201 `Location`.
/// - `HEAD /api/uploads/{id}` → `documents.upload_status` → `Upload-Offset`, `Upload-Length`,
///   `Upload-Expires`, `Cache-Control: no-store`.
/// - `PATCH /api/uploads/{id}` (`application/offset+octet-stream`, `Upload-Offset`) → the body
///   streamed into `documents.append` chunk by chunk (``UploadPump``) → 204 with the new offset;
///   409 when `Upload-Offset` is not the committed offset.
/// - `DELETE /api/uploads/{id}` → `documents.delete` → 204.
///
/// Every route but `OPTIONS` needs a session and acts as its user. A `Tus-Resumable` other than
/// `1.0.0` is 412 with `Tus-Version`, as tus requires. Bodies here are not JSON and not under
/// `GATEWAY_MAX_BODY_BYTES`: their bound is the declared `Upload-Length`, which Documents checks
/// against its maximum file size and the user's quota.
package struct TusRoutes {
    let services: ServiceClients
    let authenticator: Authenticator
    let pump: UploadPump
    let maxSize: Int64
    /// The start of the absolute `Location` of a new upload.
    let publicBase: PublicBaseURL

    static let base = "/api/uploads"
    /// `Tus-Resumable`: the one protocol version spoken.
    static let versionSchema = RouteDocs.oneOf(["1.0.0"])
    static let resumable = HTTPField.Name("Tus-Resumable")!
    static let version = HTTPField.Name("Tus-Version")!
    static let extensions = HTTPField.Name("Tus-Extension")!
    static let maxSizeField = HTTPField.Name("Tus-Max-Size")!
    static let uploadLength = HTTPField.Name("Upload-Length")!
    static let uploadOffset = HTTPField.Name("Upload-Offset")!
    static let uploadMetadata = HTTPField.Name("Upload-Metadata")!
    static let uploadExpires = HTTPField.Name("Upload-Expires")!
    static let deferLength = HTTPField.Name("Upload-Defer-Length")!
    static let offsetMediaType = "application/offset+octet-stream"

    static func location(of id: UUID) -> String { "\(base)/\(id.uuidString.lowercased())" }

    func register(on family: RouteFamily) {
        // Every request but OPTIONS speaks tus 1.0.0 (checked first: 412 otherwise) as a signed-in user; who has to have
        // accepted the terms in effect, but for termination (erasing stays open).
        let versioned = family.group(TusVersionMiddleware())
        let termsAccepted = versioned.signedIn(by: authenticator, termsAccepted: true)
        let signedIn = versioned.signedIn(by: authenticator, termsAccepted: false)
        for path in [Self.base, Self.base + "/:id"] {
            family.add(
                .options, path, "tus: the server's protocol version, extensions and maximum size.", public: true,
                docs: RouteDocs(answer: .tus(status: 204))
            ) { _, _ in
                Response(
                    status: .noContent,
                    headers: [
                        Self.resumable: "1.0.0", Self.version: "1.0.0", Self.extensions: "creation,expiration,termination",
                        Self.maxSizeField: String(maxSize),
                    ])
            }
        }
        termsAccepted.add(
            .post, Self.base, "tus creation: Upload-Length and Upload-Metadata (filename, filetype, type, title, …) → 201 Location.",
            public: false,
            docs: RouteDocs(
                headers: [
                    ("Tus-Resumable", Self.versionSchema), ("Upload-Length", RouteDocs.integer(minimum: 0)),
                    ("Upload-Metadata", RouteDocs.text),
                ],
                body: .uploadBytes(required: false), answer: .tus(status: 201))
        ) { request, context in
            let user = try context.signedIn().userId
            guard request.headers[Self.deferLength] == nil else {
                throw BusError(.invalidArgument, "Upload-Defer-Length is not supported: send Upload-Length")
            }
            guard let text = request.headers[Self.uploadLength], let length = Int64(text), length >= 0 else {
                throw BusError(.invalidArgument, "Upload-Length must be a non-negative integer")
            }
            guard length <= maxSize else { throw BusError(.payloadTooLarge, "the upload is larger than \(maxSize) bytes") }
            let metadata = try TusMetadata(header: request.headers[Self.uploadMetadata])
            guard let typeName = metadata.type, let type = DocumentType(rawValue: typeName) else {
                throw BusError(
                    .invalidArgument,
                    "Upload-Metadata must name the document type (type: \(DocumentType.allCases.map(\.rawValue).joined(separator: ", ")))")
            }
            let principal = Credential.principal(for: user)
            let document = try await services.call(
                .documents, DocumentsCreate.self,
                .init(
                    ownerId: user, type: type, title: metadata.title ?? "Untitled", description: metadata.description, fileType: metadata.fileType,
                    schoolId: metadata.schoolId, fileName: metadata.fileName, version: metadata.version, length: length),
                principal: principal, context: context)
            var headers: HTTPFields = [
                .location: publicBase.base(for: request, context: context) + Self.location(of: document.id), Self.resumable: "1.0.0",
                Self.uploadOffset: "0",
            ]
            // creation-with-upload: a body sent with the creation is appended at once.
            if request.headers[.contentType]?.lowercased().hasPrefix(Self.offsetMediaType) == true,
                let status = try await pump.pump(request.body, id: document.id, offset: 0, principal: principal, traceparent: context.traceparent)
            {
                headers[Self.uploadOffset] = String(status.offset)
            }
            return Response(status: .created, headers: headers)
        }
        termsAccepted.add(
            .head, Self.base + "/:id", "tus: the committed offset (Upload-Offset, Upload-Length, Upload-Expires).", public: false,
            docs: RouteDocs(headers: [("Tus-Resumable", Self.versionSchema)], answer: .tus(status: 200))
        ) { request, context in
            let (user, id) = try upload(context)
            let status = try await services.call(
                .documents, DocumentsUploadStatus.self, .init(id: id), principal: Credential.principal(for: user), context: context)
            var headers: HTTPFields = [
                Self.resumable: "1.0.0", Self.uploadOffset: String(status.offset), Self.uploadLength: String(status.length),
                .cacheControl: "no-store",
            ]
            if let expires = status.expiresAt { headers[Self.uploadExpires] = Self.httpDate(expires) }
            return Response(status: .ok, headers: headers)
        }
        termsAccepted.add(
            .patch, Self.base + "/:id",
            "tus: append the body (application/offset+octet-stream) at Upload-Offset → 204 with the new offset; 409 on a mismatch.", public: false,
            docs: RouteDocs(
                headers: [("Tus-Resumable", Self.versionSchema), ("Upload-Offset", RouteDocs.integer(minimum: 0))],
                body: .uploadBytes(required: true), answer: .tus(status: 204))
        ) { request, context in
            let (user, id) = try upload(context)
            guard request.headers[.contentType]?.lowercased().hasPrefix(Self.offsetMediaType) == true else {
                throw BusError(.unsupportedMediaType, "send the bytes as \(Self.offsetMediaType)")
            }
            guard let text = request.headers[Self.uploadOffset], let offset = Int64(text), offset >= 0 else {
                throw BusError(.invalidArgument, "Upload-Offset must be a non-negative integer")
            }
            let principal = Credential.principal(for: user)
            if let declared = request.headers[.contentLength].flatMap({ Int64($0) }), declared > 0 {
                // Checked before any byte is appended: a body that cannot fit changes nothing.
                let current = try await services.call(.documents, DocumentsUploadStatus.self, .init(id: id), principal: principal, context: context)
                guard current.offset == offset else {
                    throw BusError(.conflict, "Upload-Offset \(offset) is not the committed offset", details: ["offset": String(current.offset)])
                }
                guard offset + declared <= current.length else {
                    throw BusError(.invalidArgument, "the body goes past Upload-Length \(current.length)")
                }
            }
            var status = try await pump.pump(request.body, id: id, offset: offset, principal: principal, traceparent: context.traceparent)
            if status == nil {
                // An empty body: the offset must still be the committed one.
                let current = try await services.call(.documents, DocumentsUploadStatus.self, .init(id: id), principal: principal, context: context)
                guard current.offset == offset else {
                    throw BusError(.conflict, "Upload-Offset \(offset) is not the committed offset", details: ["offset": String(current.offset)])
                }
                status = current
            }
            var headers: HTTPFields = [Self.resumable: "1.0.0", Self.uploadOffset: String(status?.offset ?? offset)]
            if let expires = status?.expiresAt { headers[Self.uploadExpires] = Self.httpDate(expires) }
            return Response(status: .noContent, headers: headers)
        }
        signedIn.add(
            .delete, Self.base + "/:id", "tus termination: the upload (or document) and its bytes are deleted.", public: false,
            docs: RouteDocs(headers: [("Tus-Resumable", Self.versionSchema)], answer: .tus(status: 204))
        ) { request, context in
            let (user, id) = try upload(context)
            _ = try await services.call(.documents, DocumentsDelete.self, .init(id: id), principal: Credential.principal(for: user), context: context)
            return Response(status: .noContent, headers: [Self.resumable: "1.0.0"])
        }
    }

    /// The caller and the upload's id.
    private func upload(_ context: GatewayContext) throws -> (UUID, UUID) {
        let user = try context.signedIn().userId
        guard let id = MessageID.parse(context.pathParameter("id") ?? "") else { throw BusError(.notFound, "no such upload") }
        return (user, id)
    }

    /// tus: a `Tus-Resumable` the server does not speak is 412 with the versions it does.
    static func checkVersion(_ request: Request) throws {
        if let version = request.headers[resumable], version != "1.0.0" { throw TusVersionMismatch() }
    }

    static func httpDate(_ date: Date) -> String {
        HTTPDate.format(secondsSince1970: date.timeIntervalSince1970)
    }
}

/// The first middleware of tus's requests but OPTIONS: a `Tus-Resumable` the server does not
/// speak is 412 (``TusVersionMismatch``), before the credential or anything else is looked at.
package struct TusVersionMiddleware: RouterMiddleware {
    package typealias Context = GatewayContext

    package func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        try TusRoutes.checkVersion(request)
        return try await next(request, context)
    }
}

/// tus's 412 Precondition Failed: the only status outside the bus's code set the gateway sends,
/// because the protocol requires it for an unsupported `Tus-Resumable`.
package struct TusVersionMismatch: RenderedError {
    package func response(requestID: String) -> Response {
        let body = JSONBodies.object([
            "error": .string(ErrorCode.invalidArgument.rawValue), "message": .string("Tus-Resumable must be 1.0.0"), "requestId": .string(requestID),
        ])
        return Response(
            status: .preconditionFailed,
            headers: [TusRoutes.version: "1.0.0", TusRoutes.resumable: "1.0.0", .contentType: "application/json; charset=utf-8"],
            body: .init(byteBuffer: ByteBuffer(bytes: body)))
    }
}
