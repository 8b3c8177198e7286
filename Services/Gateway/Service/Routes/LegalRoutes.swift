import Bus
import Contracts
import Foundation
import Hummingbird

/// Public reads of the legal documents (`/api/legal/{type}/…`), `type` being `privacy_policy`
/// or `terms_of_service`. A document's version and content never change once published, so its
/// content digest is a strong `ETag`; `If-None-Match` with it answers `304` without a body.
struct LegalRoutes {
    let services: ServiceClients

    func register(on router: Router<GatewayContext>, catalog: RouteCatalog) {
        catalog.add(router, .get, "/api/legal/:type", "The version in effect now, with content and outline.", public: true) { request, context in
            let document = try await services.call(.legal, LegalCurrent.self, .init(type: try Self.type(context)), principal: .anonymous, context: context)
            return try Self.cached(document, digest: document.summary.digest, request: request)
        }
        catalog.add(router, .get, "/api/legal/:type/outline", "The h2/h3 outline of the version in effect.", public: true) { request, context in
            let document = try await services.call(.legal, LegalCurrent.self, .init(type: try Self.type(context)), principal: .anonymous, context: context)
            struct Outline: Encodable { let version: String; let digest: String; let outline: [LegalOutlineEntry] }
            return try Self.cached(
                Outline(version: document.summary.version, digest: document.summary.digest, outline: document.outline),
                digest: document.summary.digest, request: request)
        }
        catalog.add(router, .get, "/api/legal/:type/versions", "Every published version, newest first (no content).", public: true) { _, context in
            let history = try await services.call(.legal, LegalHistory.self, .init(type: try Self.type(context)), principal: .anonymous, context: context)
            return try JSONBodies.response(history)
        }
        catalog.add(router, .get, "/api/legal/:type/versions/:version", "One published version by its version string.", public: true) { request, context in
            guard let version = context.pathParameter("version"), !version.isEmpty else { throw BusError(.invalidArgument, "version is required") }
            let document = try await services.call(
                .legal, LegalVersion.self, .init(type: try Self.type(context), version: version), principal: .anonymous, context: context)
            return try Self.cached(document, digest: document.summary.digest, request: request)
        }
    }

    static func type(_ context: GatewayContext) throws -> LegalDocumentType {
        guard let raw = context.pathParameter("type"), let type = LegalDocumentType(rawValue: raw) else {
            throw BusError(.notFound, "no such legal document type; use privacy_policy or terms_of_service")
        }
        return type
    }

    /// The JSON of `value` with `ETag: "<digest>"`, or `304` when the client already holds it.
    static func cached<T: Encodable>(_ value: T, digest: String, request: Request) throws -> Response {
        let tag = "\"\(digest)\""
        let headers: HTTPFields = [.eTag: tag, .cacheControl: "no-cache"]
        if let held = request.headers[.ifNoneMatch], Self.matches(held, tag) {
            return Response(status: .notModified, headers: headers)
        }
        return try JSONBodies.response(value, headers: headers)
    }

    /// `If-None-Match` matching (weak comparison, lists and `*` allowed, RFC 9110 §13.1.2).
    static func matches(_ header: String, _ tag: String) -> Bool {
        header.split(separator: ",").contains { item in
            let trimmed = item.trimmingCharacters(in: .whitespaces)
            return trimmed == "*" || trimmed == tag || trimmed == "W/" + tag
        }
    }
}
