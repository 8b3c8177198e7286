import Bus
import Contracts
import Foundation
import HTTPTypes
import Hummingbird

/// Answers a request for a document's bytes: `ETag` (the SHA-256) and `304` on `If-None-Match`,
/// `Range` → `206` with `Content-Range`, `416` for a range past the end, `Accept-Ranges`,
/// `Content-Length`, `Content-Type` (the declared file type) and `Content-Disposition`.
///
/// The body is streamed: the response's writer asks Documents for one chunk at a time
/// (`documents.read`, at most `GATEWAY_DOCUMENTS_CHUNK_SIZE` bytes) and writes it before asking
/// for the next, so the gateway holds about one chunk per download whatever the file's size, and
/// a slow client slows the reads down (NIO's back-pressure) instead of filling memory.
struct DocumentBytes: Sendable {
    let services: ServiceClients
    let chunkSize: Int

    /// Who reads: the owner (`user:<id>`), or anyone holding a share link's `grant`.
    struct Reader: Sendable {
        let principal: Principal
        let grant: UUID?
    }

    func response(for document: Document, reader: Reader, request: Request, context: GatewayContext) throws -> Response {
        switch document.bytesState {
        case .uploading: throw BusError(.conflict, "the document is still uploading", details: ["offset": String(document.committedBytes)])
        case .missing: throw BusError(.gone, "File no longer available")
        case .available: break
        }
        let length = document.length
        let etag = "\"\(document.sha256 ?? "")\""
        var headers: HTTPFields = [
            .acceptRanges: "bytes", .eTag: etag, .cacheControl: "private, no-cache",
            .contentType: document.fileType ?? "application/octet-stream",
            .contentDisposition: Self.disposition(document, attachment: Self.wantsAttachment(request)),
            HTTPField.Name("X-Content-Type-Options")!: "nosniff",
        ]
        if let match = request.headers[.ifNoneMatch], Self.matches(match, etag: etag) {
            return Response(status: .notModified, headers: [.eTag: etag, .cacheControl: "private, no-cache"])
        }
        let range = request.headers[.range] == nil ? ByteRange.whole : ByteRange(header: request.headers[.range], length: length)
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
                "error": .string(ErrorCode.invalidArgument.rawValue), "message": .string("the range is not satisfiable: the document has \(length) bytes"),
                "requestId": .string(context.requestID),
            ])
            return Response(
                status: .rangeNotSatisfiable,
                headers: [.contentRange: "bytes */\(length)", .contentType: "application/json; charset=utf-8", .acceptRanges: "bytes"],
                body: .init(byteBuffer: ByteBuffer(bytes: body)))
        }
        let count = max(0, end - start + 1)
        let (services, chunkSize, traceparent, id) = (services, chunkSize, context.traceparent, document.id)
        let body = ResponseBody(contentLength: Int(count)) { writer in
            var offset = start
            while offset <= end {
                let want = Int(min(Int64(chunkSize), end - offset + 1))
                let (reply, attachments) = try await services.callWithAttachments(
                    .documents, DocumentsRead.self, .init(id: id, offset: offset, length: want, shareGrant: reader.grant),
                    principal: reader.principal, traceparent: traceparent)
                guard let chunk = attachments.first, reply.count > 0, chunk.count == reply.count else {
                    // The promised length cannot be met: end the connection rather than send a short body.
                    throw BusError(.internal, "Documents returned no bytes at offset \(offset)")
                }
                try await writer.write(ByteBuffer(bytes: chunk))
                offset += Int64(chunk.count)
            }
            try await writer.finish(nil)
        }
        return Response(status: status, headers: headers, body: count == 0 ? .init() : body)
    }

    /// `?download` (Supabase Storage's parameter, any value) asks for an attachment.
    static func wantsAttachment(_ request: Request) -> Bool {
        (request.uri.query ?? "").split(separator: "&").contains { $0 == "download" || $0.hasPrefix("download=") }
    }

    /// `inline` or `attachment`, with the file's name (from its file URL) plain and RFC 5987-encoded.
    static func disposition(_ document: Document, attachment: Bool) -> String {
        let name = document.fileUrl.split(separator: "/").last.map(String.init) ?? "file"
        let plain = String(name.map { $0.isASCII && $0 != "\"" && $0 != "\\" && !$0.isNewline ? $0 : "_" })
        let encoded = name.addingPercentEncoding(withAllowedCharacters: .alphanumerics.union(.init(charactersIn: ".-_"))) ?? "file"
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
