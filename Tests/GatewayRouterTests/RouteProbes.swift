import Foundation
import HTTPTypes

@testable import GatewayService
@testable import GatewaySupabase

/// The probes of every route the gateway serves, by family: each route's refusals that are decided
/// before any service is asked (no or wrong credentials, bad paths, bodies and queries, tus
/// versions), and the `503` of routes whose answer needs a backend that is not connected.
enum RouteProbes {
    static let id = "5f0c8e4e-8d3b-4c44-9d55-0f6d1b3c9a10"
    static let json: HTTPFields = [.contentType: "application/json"]
    static let tus: HTTPFields = [HTTPField.Name("Tus-Resumable")!: "1.0.0"]

    static let operations: [RouteProbe] = [
        .init("GET /healthz", .status(200)),
        .init("GET /metrics", .status(200)),
        .init("GET /openapi.json", .status(200)),
        // `/readyz` answers 200 or 503 by the runtime's readiness: checked on its own (``RouterAnswerTests``).
    ]

    static let onboarding: [RouteProbe] = [
        .init("GET /api/terms", .error(503, .onboarding)),
        .init("POST /api/users", headers: json, body: #"{"apple_id": "apple.x"}"#, .error(401, .onboarding)),
        .init("PUT /api/users/:id/accept-tos", .put, "/api/users/not-a-uuid/accept-tos", body: "{}", .error(400, .onboarding)),
        .init(
            "PUT /api/users/:id/accept-tos", .put, "/api/users/\(id)/accept-tos", headers: json, body: #"{"tos_version": "1"}"#,
            .error(401, .onboarding)),
    ]

    static let auth: [RouteProbe] = [
        .init("POST /api/auth/apple", headers: json, body: "{", .error(400, .native)),
        .init("POST /api/auth/apple", headers: json, body: #"{"identityToken": "x"}"#, .error(503, .native)),
        .init("POST /api/auth/apple/authorization-code", headers: json, body: #"{"authorizationCode": "c"}"#, .error(401, .native)),
        .init("POST /api/auth/refresh", headers: json, body: "{}", .error(400, .native)),
        .init("POST /api/auth/refresh", headers: json, body: #"{"refreshToken": "r"}"#, .error(503, .native)),
        .init(
            "POST /api/auth/refresh", headers: json, body: #"{"refreshToken": ""# + String(repeating: "r", count: 70_000) + #""}"#,
            .error(413, .native)),
        .init("POST /api/auth/sign-out", .error(401, .native)),
        .init("POST /api/apple/notifications", headers: json, body: "[]", .error(400, .native)),
        .init("POST /api/apple/notifications", headers: json, body: #"{"payload": "x.y.z"}"#, .error(503, .native)),
        .init("POST /auth/v1/token", .post, "/auth/v1/token?grant_type=id_token", .error(401, .gotrue)),
        .init("POST /auth/v1/logout", .error(401, .gotrue)),
        .init("GET /auth/v1/user", .error(401, .gotrue)),
    ]

    static let legal: [RouteProbe] = [
        .init("GET /api/legal/:type", .get, "/api/legal/cookies", .error(404, .native)),
        .init("GET /api/legal/:type", .get, "/api/legal/privacy_policy", .error(503, .native)),
        .init("GET /api/legal/:type/outline", .get, "/api/legal/cookies/outline", .error(404, .native)),
        .init("GET /api/legal/:type/outline", .get, "/api/legal/terms_of_service/outline", .error(503, .native)),
        .init("GET /api/legal/:type/versions", .get, "/api/legal/cookies/versions", .error(404, .native)),
        .init("GET /api/legal/:type/versions", .get, "/api/legal/terms_of_service/versions", .error(503, .native)),
        .init("GET /api/legal/:type/versions/:version", .get, "/api/legal/cookies/versions/1.0", .error(404, .native)),
        .init("GET /api/legal/:type/versions/:version", .get, "/api/legal/privacy_policy/versions/1.0", .error(503, .native)),
    ]

    static let accounts: [RouteProbe] = [
        .init("GET /api/me", .error(401, .native)),
        .init("PATCH /api/me", headers: json, body: "{}", .error(401, .native)),
        .init("POST /api/me/eligibility", headers: json, body: "{}", .error(401, .native)),
        .init("GET /api/me/deletion/preview", .error(401, .native)),
        .init("POST /api/me/deletion", .error(401, .native)),
        .init("POST /api/me/deletion/:requestId/confirm", .post, "/api/me/deletion/\(id)/confirm", .error(401, .native)),
        .init("DELETE /api/me/deletion/:requestId", .delete, "/api/me/deletion/\(id)", .error(401, .native)),
        .init("GET /api/me/export", .error(401, .native)),
        .init("GET /api/deletion-certificates/:certificateId", .get, "/api/deletion-certificates/nope", .error(400, .native)),
        .init("GET /api/deletion-certificates/:certificateId", .get, "/api/deletion-certificates/\(id)", .error(503, .native)),
    ]

    static let consent: [RouteProbe] = [
        .init("GET /api/me/consents", .error(401, .native)),
        .init("GET /api/me/consents/history", .error(401, .native)),
        .init(
            "POST /api/me/consents/:type/:action", .post, "/api/me/consents/terms_of_service/accept", headers: json, body: #"{"version": "1"}"#,
            .error(401, .native)),
        .init("POST /api/receipts/verify", headers: json, body: "{}", .error(400, .native)),
    ]

    static let pages: [RouteProbe] = [
        // No copy of the texts held and Legal unreachable: a 503 page a browser shows.
        .init("GET /legal/privacy", .status(503)),
        .init("GET /legal/terms", .status(503)),
    ]

    static let postgrest: [RouteProbe] = [
        .init("GET /rest/v1/legal_documents", .error(401, .postgrest)),
        .init("GET /rest/v1/documents", .error(401, .postgrest)),
        // The query is parsed before the caller is asked for: a bad operator is 400 whoever asks.
        .init("GET /rest/v1/documents", .get, "/rest/v1/documents?title=nope.x", .error(400, .postgrest)),
        .init("GET /rest/v1/legal_acceptances", .error(401, .postgrest)),
        .init("POST /rest/v1/legal_acceptances", headers: json, body: "{}", .error(401, .postgrest)),
    ]

    static let documents: [RouteProbe] = [
        .init("POST /api/documents", headers: json, body: "{}", .error(401, .native)),
        .init("GET /api/documents", .error(401, .native)),
        .init("GET /api/documents/:reference", .get, "/api/documents/\(id)", .error(401, .native)),
        .init("GET /api/documents/:reference/position", .get, "/api/documents/\(id)/position", .error(401, .native)),
        .init("DELETE /api/documents/:reference", .delete, "/api/documents/\(id)", .error(401, .native)),
        .init("GET /api/documents/:reference/content", .get, "/api/documents/\(id)/content", .error(401, .native)),
        .init(
            "POST /api/documents/:reference/share-links", .post, "/api/documents/\(id)/share-links", headers: json, body: "{}", .error(401, .native)),
        .init("GET /api/documents/:reference/share-links", .get, "/api/documents/\(id)/share-links", .error(401, .native)),
        .init("DELETE /api/share-links/:linkId", .delete, "/api/share-links/\(id)", .error(401, .native)),
        .init("GET /api/shared/:token", .get, "/api/shared/some-token", .error(503, .native)),
        .init("OPTIONS /api/uploads", .status(204)),
        .init("OPTIONS /api/uploads/:id", .options, "/api/uploads/\(id)", .status(204)),
        .init("POST /api/uploads", headers: tus, .error(401, .native)),
        // An unsupported tus version is refused before the credential is looked at.
        .init("POST /api/uploads", headers: [HTTPField.Name("Tus-Resumable")!: "0.2.2"], .error(412, .native)),
        .init("HEAD /api/uploads/:id", .head, "/api/uploads/\(id)", headers: tus, .error(401, .native)),
        .init("PATCH /api/uploads/:id", .patch, "/api/uploads/\(id)", headers: tus, .error(401, .native)),
        .init("DELETE /api/uploads/:id", .delete, "/api/uploads/\(id)", headers: tus, .error(401, .native)),
        .init("DELETE /api/uploads/:id", .delete, "/api/uploads/\(id)", headers: [HTTPField.Name("Tus-Resumable")!: "2"], .error(412, .native)),
    ]

    static let storage: [RouteProbe] = [
        .init("GET /storage/v1/object/:bucket/**", .get, "/storage/v1/object/documents/\(id)/cv.pdf", .error(401, .storage)),
        .init(
            "GET /storage/v1/object/authenticated/:bucket/**", .get, "/storage/v1/object/authenticated/documents/\(id)/cv.pdf", .error(401, .storage)),
        .init("GET /storage/v1/object/public/:bucket/**", .get, "/storage/v1/object/public/documents/\(id)/cv.pdf", .error(404, .storage)),
        .init(
            "POST /storage/v1/object/sign/:bucket/**", .post, "/storage/v1/object/sign/documents/\(id)/cv.pdf", headers: json, body: "{}",
            .error(401, .storage)),
        .init("GET /storage/v1/object/sign/:bucket/**", .get, "/storage/v1/object/sign/documents/\(id)/cv.pdf", .error(400, .storage)),
        .init("GET /storage/v1/object/sign/:bucket/**", .get, "/storage/v1/object/sign/photos/\(id)/cv.pdf?token=t", .error(404, .storage)),
        .init("GET /storage/v1/object/sign/:bucket/**", .get, "/storage/v1/object/sign/documents/\(id)/cv.pdf?token=t", .error(503, .storage)),
    ]

    /// Requests no route matches (unknown paths, methods a path does not take): 404 in the body of
    /// the family whose paths they fall under.
    static let unmatched: [RouteProbe] = [
        .init(nil, .get, "/nope", .error(404, .native)),
        .init(nil, .put, "/api/me", .error(404, .native)),
        .init(nil, .delete, "/api/terms", .error(404, .onboarding)),
        .init(nil, .get, "/api/users/\(id)/profile", .error(404, .onboarding)),
        .init(nil, .get, "/rest/v1/users", .error(404, .postgrest)),
        .init(nil, .delete, "/rest/v1/legal_documents", .error(404, .postgrest)),
        .init(nil, .get, "/storage/v1/bucket", .error(404, .storage)),
        .init(nil, .get, "/auth/v1/settings", .error(404, .gotrue)),
    ]

    static let all: [RouteProbe] =
        operations + onboarding + auth + legal + accounts + consent + pages + postgrest + documents + storage + unmatched
}
