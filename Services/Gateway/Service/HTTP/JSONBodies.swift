import Bus
import Foundation
import Hummingbird

/// Reading JSON request bodies and writing JSON responses.
///
/// Request bodies are read up to a limit (413 `payload_too_large` past it), must say
/// `Content-Type: application/json` when they say anything (415 otherwise), and must decode into
/// the route's type (400 `invalid_argument` naming the field otherwise). Responses use the bus's
/// encoder: RFC 3339 dates with milliseconds, sorted keys.
package enum JSONBodies {
    static let encoder = BusJSON.encoder()

    package static func object(_ members: [String: JSONValue]) -> Data {
        (try? encoder.encode(members)) ?? Data("{}".utf8)
    }

    /// Decodes the body with the bus's decoder (FastJSON, with Foundation's decoder for what it does
    /// not handle, whose value or error then stands: the same answers as Foundation's, without
    /// a decoder made and configured per request), or with `decoder` when one is given.
    package static func decode<T: Decodable>(_ type: T.Type, from request: Request, limit: Int, decoder: JSONDecoder? = nil) async throws -> T {
        if let contentType = request.headers[.contentType], !contentType.lowercased().hasPrefix("application/json") {
            throw BusError(.unsupportedMediaType, "send the body as application/json")
        }
        let data = try await collect(request, limit: limit)
        guard !data.isEmpty else { throw BusError(.invalidArgument, "a JSON body is required") }
        do { return try decoder.map { try $0.decode(T.self, from: data) } ?? BusJSON.decode(T.self, from: data) } catch let error as DecodingError {
            throw BusError(.invalidArgument, "the body is not valid: \(BusJSON.describe(error))")
        } catch {
            throw BusError(.invalidArgument, "the body is not valid JSON")
        }
    }

    /// The whole body, or `payload_too_large` as soon as it passes `limit` (a `Content-Length`
    /// over the limit is refused before anything is read).
    package static func collect(_ request: Request, limit: Int) async throws -> Data {
        if let length = request.headers[.contentLength].flatMap({ Int($0) }), length > limit {
            throw BusError(.payloadTooLarge, "the body is larger than \(limit) bytes")
        }
        var data = Data()
        for try await chunk in request.body {
            guard data.count + chunk.readableBytes <= limit else { throw BusError(.payloadTooLarge, "the body is larger than \(limit) bytes") }
            data.append(contentsOf: chunk.readableBytesView)
        }
        return data
    }

    /// A JSON response. The bus's fast encoder writes the same bytes as ``encoder`` at a fraction of
    /// its cost (it was 5% of the gateway's CPU under `deploy/bench-gateway`).
    package static func response<T: Encodable>(_ value: T, status: HTTPResponse.Status = .ok, headers: HTTPFields = [:]) throws -> Response {
        var headers = headers
        if headers[.contentType] == nil { headers[.contentType] = "application/json; charset=utf-8" }
        return Response(status: status, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: try BusJSON.encodeBytes(value))))
    }
}
