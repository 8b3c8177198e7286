import Bus
import Foundation
import GatewayService
import HTTPTypes
import Hummingbird

/// PostgREST's answer to a read, made once and sendable as often as wanted (``LegalTexts``
/// keeps `legal_documents`' answers): `Content-Range: first-last/total` (`*/total` when empty,
/// `*` for an uncounted total), 206 when a counted total holds more rows than came, 416
/// (PGRST103) for an offset past a counted total; one object for `.single()` (406 PGRST116
/// unless exactly one row came).
struct PostgRESTReadAnswer: Sendable {
    static let objectMediaType = "application/vnd.pgrst.object+json"
    static let contentRangeHeader = HTTPField.Name("Content-Range")!

    let status: HTTPResponse.Status
    let headers: HTTPFields
    let body: ByteBuffer

    /// `rows` (already projected) that start at row `offset` of `total`.
    init(_ rows: [[String: JSONValue]], offset: Int, total: Int?, wantsObject: Bool) throws {
        let totalText = total.map(String.init) ?? "*"
        let contentRange = rows.isEmpty || total == 0 ? "*/\(totalText)" : "\(offset)-\(offset + rows.count - 1)/\(totalText)"
        var status = HTTPResponse.Status.ok
        if let total {
            if offset > total { throw PostgRESTError.rangeNotSatisfiable(offset: offset, total: total) }
            if rows.count < total { status = .partialContent }
        }
        if wantsObject {
            guard rows.count == 1 else { throw PostgRESTError.notOneRow(rows.count) }
            self.status = .ok
            body = ByteBuffer(bytes: try BusJSON.encodeBytes(JSONValue.object(rows[0])))
            headers = [.contentType: Self.objectMediaType, Self.contentRangeHeader: contentRange]
        } else {
            self.status = status
            body = ByteBuffer(bytes: try BusJSON.encodeBytes(JSONValue.array(rows.map { .object($0) })))
            headers = [.contentType: "application/json; charset=utf-8", Self.contentRangeHeader: contentRange]
        }
    }

    /// Whether the client asked for one object (`Accept: application/vnd.pgrst.object+json`, `.single()`).
    static func wantsObject(_ request: Request) -> Bool {
        request.headers[.accept]?.contains(objectMediaType) == true
    }

    var response: Response { Response(status: status, headers: headers, body: .init(byteBuffer: body)) }
}
