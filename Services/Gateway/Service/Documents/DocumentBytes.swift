import Bus
import Contracts
import Foundation
import HTTPTypes
import Hummingbird

/// Answers a request for a document's bytes: a strong `ETag` (the SHA-256 of the bytes) with
/// `304` on `If-None-Match`, `Range` → `206` with `Content-Range` (honoured only while
/// `If-Range` names the current tag), `416` for a range past the end, `Accept-Ranges`,
/// `Content-Length`, `Content-Type` (the declared file type) and `Content-Disposition` with the
/// original file name (RFC 6266: an ASCII `filename` and the exact UTF-8 `filename*`).
///
/// The bytes of a document never change (a new version is a new document), so downloads are
/// `Cache-Control: private, max-age=…, immutable`.
///
/// User content is hostile until proven otherwise: only types a browser shows without running
/// anything (``inlineSafe(_:)``) may be `inline`, everything else is an `attachment`; every
/// answer carries `X-Content-Type-Options: nosniff` and `Content-Security-Policy: sandbox`, so
/// even a file opened as a page in our origin runs no script and reaches no cookie.
///
/// The body is streamed: the response's writer asks Documents for one chunk at a time
/// (`documents.read`, at most `GATEWAY_DOCUMENTS_CHUNK_SIZE` bytes) and writes it before asking
/// for the next, so the gateway holds about one chunk per download whatever the file's size, and
/// a slow client slows the reads down (NIO's back-pressure) instead of filling memory. The first
/// chunk is read before the status line goes out, so a store that is down when the download
/// starts answers a 503 the client can read; one that fails later cuts the connection short of
/// the promised `Content-Length`, never ends it as if the body were complete.
package struct DocumentBytes: Sendable {
    let services: ServiceClients
    let chunkSize: Int
    /// `max-age` of downloads (``GatewaySettings/downloadMaxAge``).
    var maxAgeSeconds: Int = 3600

    /// Who reads: the owner (`user:<id>`), or anyone holding a share link's `grant`.
    package struct Reader: Sendable {
        let principal: Principal
        let grant: UUID?

        package init(principal: Principal, grant: UUID?) {
            self.principal = principal
            self.grant = grant
        }
    }

    static let contentTypeOptions = HTTPField.Name("X-Content-Type-Options")!
    static let contentSecurityPolicy = HTTPField.Name("Content-Security-Policy")!
    static let ifRange = HTTPField.Name("If-Range")!

    /// The bytes of `document` for `request`; `maxAge` caps the cache lifetime (a signed link's
    /// remaining seconds).
    package func response(for document: Document, reader: Reader, request: Request, context: GatewayContext, maxAge: Int? = nil) async throws
        -> Response
    {
        switch document.bytesState {
        case .uploading: throw BusError(.conflict, "the document is still uploading", details: ["offset": String(document.committedBytes)])
        case .missing: throw BusError(.gone, "File no longer available")
        case .available: break
        }
        let length = document.length
        let etag = "\"\(document.sha256 ?? "")\""
        let cacheControl = "private, max-age=\(max(0, min(maxAgeSeconds, maxAge ?? .max))), immutable"
        let attachment = Self.wantsAttachment(request) || !Self.inlineSafe(document.fileType)
        let headers: HTTPFields = [
            .acceptRanges: "bytes", .eTag: etag, .cacheControl: cacheControl,
            .contentType: document.fileType ?? "application/octet-stream",
            .contentDisposition: Self.disposition(document, attachment: attachment),
            Self.contentTypeOptions: "nosniff", Self.contentSecurityPolicy: "sandbox",
        ]
        if let match = request.headers[.ifNoneMatch], Self.matches(match, etag: etag) {
            return Response(
                status: .notModified,
                headers: [.eTag: etag, .cacheControl: cacheControl, Self.contentTypeOptions: "nosniff", Self.contentSecurityPolicy: "sandbox"])
        }
        // If-Range: the range only while the client's copy is this one (strong comparison; a
        // date never matches, there is no Last-Modified); otherwise the whole document.
        if let condition = request.headers[Self.ifRange], condition.trimmingCharacters(in: .whitespaces) != etag {
            return try await body(document, reader: reader, range: .whole, headers: headers, head: request.method == .head, context: context)
        }
        let range = request.headers[.range] == nil ? ByteRange.whole : ByteRange(header: request.headers[.range], length: length)
        return try await body(document, reader: reader, range: range, headers: headers, head: request.method == .head, context: context)
    }

    /// The answer for `range`: 200, 206 or 416, the body read chunk by chunk.
    private func body(_ document: Document, reader: Reader, range: ByteRange, headers: HTTPFields, head: Bool, context: GatewayContext)
        async throws
        -> Response
    {
        let length = document.length
        var headers = headers
        let (start, end): (Int64, Int64)
        let status: HTTPResponse.Status
        switch range {
        case .whole:
            (start, end, status) = (0, length - 1, .ok)
        case .partial(let first, let last):
            (start, end, status) = (first, last, .partialContent)
            headers[.contentRange] = "bytes \(first)-\(last)/\(length)"
        case .unsatisfiable:
            let body = JSONBodies.object([
                "error": .string(ErrorCode.invalidArgument.rawValue),
                "message": .string("the range is not satisfiable: the document has \(length) bytes"),
                "requestId": .string(context.requestID),
            ])
            return Response(
                status: .rangeNotSatisfiable,
                headers: [.contentRange: "bytes */\(length)", .contentType: "application/json; charset=utf-8", .acceptRanges: "bytes"],
                body: .init(byteBuffer: ByteBuffer(bytes: body)))
        }
        let count = max(0, end - start + 1)
        guard count > 0 else { return Response(status: status, headers: headers, body: .init()) }
        let (services, chunkSize, traceparent, id) = (services, chunkSize, context.traceparent, document.id)
        @Sendable func chunk(at offset: Int64) async throws -> ByteBuffer {
            let want = Int(min(Int64(chunkSize), end - offset + 1))
            let (reply, attachments) = try await services.callWithAttachments(
                .documents, DocumentsRead.self, .init(id: id, offset: offset, length: want, shareGrant: reader.grant),
                principal: reader.principal, traceparent: traceparent)
            guard let chunk = attachments.first, reply.count > 0, chunk.count == reply.count else {
                // The promised length cannot be met: end the connection rather than send a short body.
                throw BusError(.internal, "Documents returned no bytes at offset \(offset)")
            }
            return ByteBuffer(bytes: chunk)
        }
        // HEAD (Hummingbird answers it with this GET handler, dropping the body) reads no byte.
        if head {
            return Response(status: status, headers: headers, body: ResponseBody(contentLength: Int(count)) { try await $0.finish(nil) })
        }
        // Before the status line: a store or Documents that cannot read is still an error answer here.
        let first = try await chunk(at: start)
        let body = ResponseBody(contentLength: Int(count)) { writer in
            var offset = start + Int64(first.readableBytes)
            try await writer.write(first)
            while offset <= end {
                let next = try await chunk(at: offset)
                offset += Int64(next.readableBytes)
                try await writer.write(next)
            }
            try await writer.finish(nil)
        }
        return Response(status: status, headers: headers, body: body)
    }

    /// `?download` (Supabase Storage's parameter, any value) asks for an attachment.
    static func wantsAttachment(_ request: Request) -> Bool {
        (request.uri.query ?? "").split(separator: "&").contains { $0 == "download" || $0.hasPrefix("download=") }
    }

    /// Types a browser displays without running anything of the file's: images but SVG (a
    /// document that can hold script), PDF, video, audio and plain text. Anything else is sent as
    /// an attachment.
    static func inlineSafe(_ fileType: String?) -> Bool {
        guard let fileType else { return false }
        let essence = fileType.split(separator: ";", maxSplits: 1).first.map { $0.trimmingCharacters(in: .whitespaces).lowercased() } ?? ""
        if essence == "image/svg+xml" { return false }
        return essence == "application/pdf" || essence == "text/plain"
            || ["image/", "video/", "audio/"].contains { essence.hasPrefix($0) && essence.count > $0.count }
    }

    /// `inline` or `attachment` with the original file name (RFC 6266): `filename` is an ASCII
    /// stand-in (other characters, quotes, `\\` and controls become `_`), `filename*` the exact
    /// name, UTF-8 percent-encoded (RFC 8187). A document without a name is `file`.
    static func disposition(_ document: Document, attachment: Bool) -> String {
        let stored = document.fileUrl.split(separator: "/").last.map(String.init) ?? "file"
        let name = document.fileName.flatMap { $0.isEmpty ? nil : $0 } ?? stored
        let plain = String(
            name.unicodeScalars.map { scalar -> Character in
                scalar.isASCII && scalar.value >= 0x20 && scalar.value != 0x7F && scalar != "\"" && scalar != "\\" ? Character(scalar) : "_"
            })
        // RFC 8187 attr-char: ALPHA DIGIT ! # $ & + - . ^ _ ` | ~
        let attrChar = CharacterSet(charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789!#$&+-.^_`|~")
        let encoded = name.addingPercentEncoding(withAllowedCharacters: attrChar) ?? "file"
        return "\(attachment ? "attachment" : "inline"); filename=\"\(plain)\"; filename*=UTF-8''\(encoded)"
    }

    /// `If-None-Match`: `*`, or a list of (possibly weak) tags.
    static func matches(_ header: String, etag: String) -> Bool {
        header.split(separator: ",").contains { candidate in
            let tag = candidate.trimmingCharacters(in: .whitespaces)
            return tag == "*" || tag == etag || tag == "W/" + etag
        }
    }
}
