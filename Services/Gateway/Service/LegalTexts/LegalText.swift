import Bus
import Contracts
import Foundation
import HTTPTypes
import Hummingbird

/// One published version of a legal document with every response the gateway sends for it, made
/// once when the version is loaded: serving it is a copy of bytes already in memory, with no JSON
/// encoding and no markdown rendering per request.
///
/// A version never changes once published, so none of this goes out of date; what changes is
/// which version is in effect (``LegalTextsState``). The bodies are byte for byte what the routes
/// wrote when they encoded on every request (the bus's encoder, sorted keys).
package final class LegalText: Sendable {
    package let document: LegalDocument
    /// `"<digest>"`: the strong entity tag of every representation of this version.
    let entityTag: String
    /// `GET /api/legal/{type}`: the whole document (summary, content, outline).
    let documentJSON: ByteBuffer
    /// `GET /api/legal/{type}/outline`: `{digest, outline, version}`.
    let outlineJSON: ByteBuffer
    /// `GET /api/terms` (seed 004): `{content, version}`.
    let seedJSON: ByteBuffer
    /// `GET /legal/privacy`, `/legal/terms`: the HTML page (``LegalPage``).
    let page: ByteBuffer
    /// The headers of the JSON routes' answers (`ETag`, `Cache-Control: no-cache`).
    let jsonHeaders: HTTPFields
    /// The headers of the page's answers (``PageRoutes/headers(tag:)``).
    let pageHeaders: HTTPFields

    var summary: LegalVersionSummary { document.summary }

    init(_ document: LegalDocument) throws {
        struct Outline: Encodable {
            let version: String
            let digest: String
            let outline: [LegalOutlineEntry]
        }
        let summary = document.summary
        self.document = document
        entityTag = "\"\(summary.digest)\""
        documentJSON = ByteBuffer(bytes: try BusJSON.encode(document))
        outlineJSON = ByteBuffer(bytes: try BusJSON.encode(Outline(version: summary.version, digest: summary.digest, outline: document.outline)))
        seedJSON = ByteBuffer(bytes: try BusJSON.encode(["content": document.content, "version": summary.version]))
        page = ByteBuffer(string: LegalPage.html(for: document))
        jsonHeaders = [.eTag: entityTag, .cacheControl: "no-cache"]
        pageHeaders = PageRoutes.headers(tag: entityTag)
    }

    /// Whether this is `summary`'s version with the same content.
    func isVersion(of summary: LegalVersionSummary) -> Bool {
        self.summary.type == summary.type && self.summary.version == summary.version && self.summary.digest == summary.digest
    }
}
