import Bus
import Contracts
import Foundation
import Hummingbird

/// Public reads of the legal documents (`/api/legal/{type}/…`), `type` being `privacy_policy`
/// or `terms_of_service`, and seed 004's `GET /api/terms`. A document's version and content never
/// change once published, so its content digest is a strong `ETag`; `If-None-Match` with it
/// answers `304` without a body. The version in effect and its outline come from the gateway's
/// copy of the texts (``LegalTexts``); the history and older versions are asked of Legal.
package struct LegalRoutes {
    let services: ServiceClients
    let texts: LegalTexts

    /// Seed 004's read of the terms.
    static let seedTermsPath = "/api/terms"

    /// Registers the reads on `family`, and seed 004's `GET /api/terms` on the seed's family `seed` (its other two
    /// routes are ``OnboardingRoutes``), whose errors come in the seed's shape. All of them are public.
    func register(on family: RouteFamily, seed: RouteFamily) {
        // No `ETag` on the seed's read, as its client expects none.
        seed.add(.get, Self.seedTermsPath, "Seed 004: the terms of service in effect, {content, version}.", public: true) { request, context in
            let hit = try await texts.current(.termsOfService, services: services, context: context)
            return LegalResponses.respond(request, body: hit.text.seedJSON, contentType: LegalResponses.json, stale: hit.stale)
        }
        family.add(.get, "/api/legal/:type", "The version in effect now, with content and outline.", public: true, docs: RouteDocs(conditional: true))
        { request, context in
            let hit = try await texts.current(try Self.type(context), services: services, context: context)
            return Self.respond(request, body: hit.text.documentJSON, hit: hit)
        }
        family.add(.get, "/api/legal/:type/outline", "The h2/h3 outline of the version in effect.", public: true, docs: RouteDocs(conditional: true))
        { request, context in
            let hit = try await texts.current(try Self.type(context), services: services, context: context)
            return Self.respond(request, body: hit.text.outlineJSON, hit: hit)
        }
        family.add(
            .get, "/api/legal/:type/versions", "Every published version, newest first (no content).", public: true, docs: RouteDocs(conditional: true)
        ) { _, context in
            let history = try await services.call(
                .legal, LegalHistory.self, .init(type: try Self.type(context)), principal: .anonymous, context: context)
            return try JSONBodies.response(history)
        }
        family.add(
            .get, "/api/legal/:type/versions/:version", "One published version by its version string.", public: true,
            docs: RouteDocs(conditional: true)
        ) {
            request, context in
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

    /// A cached JSON body of the version in effect with its `ETag`, or `304`.
    static func respond(_ request: Request, body: ByteBuffer, hit: LegalTexts.Hit) -> Response {
        LegalResponses.respond(
            request, body: body, contentType: LegalResponses.json, headers: hit.text.jsonHeaders, tag: hit.text.entityTag, stale: hit.stale)
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
