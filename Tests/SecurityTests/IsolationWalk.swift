import Foundation
import GatewayTestSupport

/// The isolation walk: for every route of the gateway's catalog, either requests that user A
/// makes with A's own session against B's ids (or, where a route names no id, trying to slip B's
/// id in), or the reason the route needs no walk (it is public and its credential is in the
/// request). ``IsolationTests`` checks that the two lists cover the catalog exactly.
enum IsolationWalk {
    /// One request of A's and the statuses that count as refused.
    struct Probe: Sendable {
        let method: String
        let path: String
        var json: [String: any Sendable]? = nil
        var jsonArray: [[String: any Sendable]]? = nil
        var body: Data? = nil
        var headers: [String: String] = [:]
        /// The statuses the gateway's contract gives for this refusal; empty for routes that act
        /// only on the caller (any status below 500: what matters is that B's data neither shows
        /// nor changes).
        let refused: Set<Int>
        /// Text that must not appear in the reply (B's ids), for routes that answer A's own data.
        var mustNotContain: [String] = []
        /// The probe, done with A's session, ends A's sessions (declining the terms signs out
        /// everywhere): A signs in again before the next probe.
        var endsSession = false
    }

    /// Public routes, each with why A cannot reach B's data through it.
    static let publicRoutes: [String: String] = [
        "GET /healthz": "operational: liveness, no user data",
        "GET /readyz": "operational: readiness, no user data",
        "GET /metrics": "operational: counters by route pattern, no ids",
        "GET /openapi.json": "operational: the API description",
        "GET /api/terms": "public legal text",
        "GET /api/legal/:type": "public legal text",
        "GET /api/legal/:type/outline": "public legal text",
        "GET /api/legal/:type/versions": "public legal text",
        "GET /api/legal/:type/versions/:version": "public legal text",
        "GET /legal/privacy": "public legal page",
        "GET /legal/terms": "public legal page",
        "GET /rest/v1/legal_documents": "public legal texts (PostgREST view)",
        "POST /api/auth/apple": "the Apple identity token in the body is the credential (forged ones: SessionTokenTests, GatewayTests)",
        "POST /api/auth/refresh": "B's refresh token (256 random bits, never shown to A) is the credential",
        "POST /api/auth/sign-out": "ends the bearer's own session or the one of a refresh token A does not have",
        "POST /api/apple/notifications": "Apple's signed JWT is the credential (forged signature refused: GatewayTests)",
        "POST /api/receipts/verify": "checks a receipt the caller already holds; answers valid/invalid, no other data",
        "OPTIONS /api/uploads": "tus discovery: protocol version and limits only",
        "OPTIONS /api/uploads/:id": "tus discovery: protocol version and limits only",
        "GET /api/shared/:token": "the share token is the credential (guessing: ShareLinkTests)",
        "POST /auth/v1/token": "Supabase Auth: the Apple identity token or B's refresh token (never shown to A) in the body is the credential",
        "POST /auth/v1/logout": "Supabase Auth: ends the bearer's own sessions (scope local, global or others: all the bearer's)",
        "GET /api/deletion-certificates/:certificateId": "a certificate names no one (a salted digest only); its random id is the credential",
    ]

    /// A's requests, by catalog route (`METHOD /path/:param`).
    static func probes(victim b: IsolationVictim, terms: String, privacy: String) -> [String: [Probe]] {
        let doc = b.documentId
        let tus = ["Tus-Resumable": "1.0.0"]
        let notFound: Set<Int> = [404]
        // Routes with no id of B to aim at (they act on the caller): any status below 500 will do,
        // provided no id of B shows in the reply and B is unchanged afterwards.
        let ownOnly: Set<Int> = []
        let bIds = [b.user.id, b.user.id.uppercased(), doc, doc.uppercased(), b.shareLinkId, b.deletionRequestId, b.fileUrl]
        return [
            // Seed 004.
            "POST /api/users": [
                Probe(
                    method: "POST", path: "/api/users",
                    json: [
                        "apple_id": b.appleId, "email": "a@example.com", "name": "Mallory", "state": "AL", "eligibility_certified": true,
                        "tos_version": terms,
                    ],
                    refused: [403])
            ],
            "PUT /api/users/:id/accept-tos": [
                Probe(method: "PUT", path: "/api/users/\(b.user.id)/accept-tos", json: ["tos_version": terms], refused: [403]),
                Probe(method: "PUT", path: "/api/users/\(b.user.id.uppercased())/accept-tos", json: ["tos_version": terms], refused: [403]),
            ],
            // The caller's own account: no id in the path; B's id slipped into bodies is ignored.
            "GET /api/me": [Probe(method: "GET", path: "/api/me?userId=\(b.user.id)", refused: ownOnly, mustNotContain: bIds)],
            "GET /auth/v1/user": [Probe(method: "GET", path: "/auth/v1/user?id=\(b.user.id)", refused: ownOnly, mustNotContain: bIds)],
            "POST /api/me/eligibility": [
                Probe(
                    method: "POST", path: "/api/me/eligibility",
                    json: ["userId": b.user.id, "apple_id": b.appleId, "state": "AL", "eligibilityCertified": true, "tosVersion": terms],
                    refused: ownOnly, mustNotContain: bIds)
            ],
            "GET /api/me/consents": [Probe(method: "GET", path: "/api/me/consents?userId=\(b.user.id)", refused: ownOnly, mustNotContain: bIds)],
            "GET /api/me/consents/history": [
                Probe(method: "GET", path: "/api/me/consents/history?userId=\(b.user.id)", refused: ownOnly, mustNotContain: bIds)
            ],
            "POST /api/me/consents/:type/:action": [
                Probe(
                    method: "POST", path: "/api/me/consents/terms_of_service/decline", json: ["version": terms, "userId": b.user.id],
                    refused: ownOnly, mustNotContain: bIds, endsSession: true),
                Probe(
                    method: "POST", path: "/api/me/consents/privacy_policy/acknowledge", json: ["version": privacy, "user_id": b.user.id],
                    refused: ownOnly, mustNotContain: bIds),
            ],
            "PATCH /api/me": [
                Probe(
                    method: "PATCH", path: "/api/me", json: ["userId": b.user.id, "id": b.user.id, "name": "Mallory"], refused: ownOnly,
                    mustNotContain: bIds)
            ],
            // Stored (uncompressed) ZIP entries: an id of B's in the archive would show in the bytes.
            "GET /api/me/export": [Probe(method: "GET", path: "/api/me/export?userId=\(b.user.id)", refused: ownOnly, mustNotContain: bIds)],
            // Stores a code for the caller's own session only; B's ids slipped in are ignored (an empty
            // code is refused before Apple is asked: this stack has no Apple token endpoints).
            "POST /api/auth/apple/authorization-code": [
                Probe(
                    method: "POST", path: "/api/auth/apple/authorization-code",
                    json: ["authorizationCode": "", "userId": b.user.id, "appleId": b.appleId], refused: ownOnly, mustNotContain: bIds)
            ],
            "GET /api/me/deletion/preview": [Probe(method: "GET", path: "/api/me/deletion/preview", refused: ownOnly, mustNotContain: bIds)],
            "POST /api/me/deletion": [
                Probe(method: "POST", path: "/api/me/deletion", json: ["userId": b.user.id], refused: ownOnly, mustNotContain: bIds)
            ],
            "POST /api/me/deletion/:requestId/confirm": [
                Probe(method: "POST", path: "/api/me/deletion/\(b.deletionRequestId)/confirm", refused: [403, 404])
            ],
            "DELETE /api/me/deletion/:requestId": [Probe(method: "DELETE", path: "/api/me/deletion/\(b.deletionRequestId)", refused: [403, 404])],
            // PostgREST.
            "POST /rest/v1/legal_acceptances": [
                Probe(
                    method: "POST", path: "/rest/v1/legal_acceptances",
                    jsonArray: [["user_id": b.user.id, "document_type": "terms_of_service", "version": terms, "action": "decline"]], refused: [403]),
                Probe(
                    method: "POST", path: "/rest/v1/legal_acceptances",
                    json: ["user_id": b.user.id, "document_type": "privacy_policy", "version": privacy], refused: [403]),
            ],
            "GET /rest/v1/legal_acceptances": [
                Probe(method: "GET", path: "/rest/v1/legal_acceptances?select=*", refused: ownOnly, mustNotContain: bIds),
                Probe(method: "GET", path: "/rest/v1/legal_acceptances?user_id=eq.\(b.user.id)", refused: ownOnly, mustNotContain: bIds),
                Probe(
                    method: "GET", path: "/rest/v1/legal_acceptances?or=(user_id.eq.\(b.user.id),user_id.is.not_null)", refused: ownOnly,
                    mustNotContain: bIds),
            ],
            "GET /rest/v1/documents": [
                Probe(method: "GET", path: "/rest/v1/documents?id=eq.\(doc)", refused: ownOnly, mustNotContain: bIds),
                Probe(method: "GET", path: "/rest/v1/documents?select=*&user_id=eq.\(b.user.id)", refused: ownOnly, mustNotContain: bIds),
                Probe(method: "GET", path: "/rest/v1/documents?select=*", refused: ownOnly, mustNotContain: bIds),
            ],
            // Documents.
            "POST /api/documents": [
                Probe(
                    method: "POST", path: "/api/documents",
                    json: ["type": "resume", "title": "mine", "fileName": "a.bin", "length": 1, "ownerId": b.user.id, "userId": b.user.id],
                    refused: ownOnly, mustNotContain: [b.user.id, doc])
            ],
            "GET /api/documents": [
                Probe(method: "GET", path: "/api/documents", refused: ownOnly, mustNotContain: bIds),
                Probe(method: "GET", path: "/api/documents?userId=\(b.user.id)&ownerId=\(b.user.id)", refused: ownOnly, mustNotContain: bIds),
            ],
            "GET /api/documents/:reference": [
                Probe(method: "GET", path: "/api/documents/\(doc)", refused: notFound),
                Probe(method: "GET", path: "/api/documents/\(doc.uppercased())", refused: notFound),
                Probe(method: "GET", path: "/api/documents/\(b.encodedFileUrl)", refused: notFound),
            ],
            "DELETE /api/documents/:reference": [
                Probe(method: "DELETE", path: "/api/documents/\(doc)", refused: notFound),
                Probe(method: "DELETE", path: "/api/documents/\(b.encodedFileUrl)", refused: notFound),
            ],
            "GET /api/documents/:reference/position": [Probe(method: "GET", path: "/api/documents/\(doc)/position", refused: notFound)],
            "GET /api/documents/:reference/content": [
                Probe(method: "GET", path: "/api/documents/\(doc)/content", refused: notFound),
                Probe(method: "GET", path: "/api/documents/\(doc)/content?download", headers: ["Range": "bytes=0-99"], refused: notFound),
                Probe(method: "HEAD", path: "/api/documents/\(doc)/content", refused: notFound),
                Probe(method: "GET", path: "/api/documents/\(b.encodedFileUrl)/content", headers: ["Range": "bytes=-10"], refused: notFound),
            ],
            "POST /api/documents/:reference/share-links": [
                Probe(method: "POST", path: "/api/documents/\(doc)/share-links", json: ["expiresInSeconds": 3600], refused: notFound),
                Probe(
                    method: "POST", path: "/api/documents/\(b.encodedFileUrl)/share-links", json: ["expiresInSeconds": 3600, "maxUses": 5],
                    refused: notFound),
            ],
            "GET /api/documents/:reference/share-links": [Probe(method: "GET", path: "/api/documents/\(doc)/share-links", refused: notFound)],
            "DELETE /api/share-links/:linkId": [Probe(method: "DELETE", path: "/api/share-links/\(b.shareLinkId)", refused: notFound)],
            // tus.
            "POST /api/uploads": [
                Probe(
                    method: "POST", path: "/api/uploads",
                    headers: tus.merging([
                        "Upload-Length": "4",
                        "Upload-Metadata": GatewayHarness.metadata(["type": "resume", "filename": "x.bin", "userId": b.user.id]),
                    ]) { a, _ in a },
                    refused: ownOnly, mustNotContain: [b.uploadPath])
            ],
            "HEAD /api/uploads/:id": [Probe(method: "HEAD", path: b.uploadPath, headers: tus, refused: notFound)],
            "PATCH /api/uploads/:id": [
                Probe(
                    method: "PATCH", path: b.uploadPath, body: Data(repeating: 0x41, count: 600),
                    headers: tus.merging(["Upload-Offset": String(b.uploadOffset), "Content-Type": "application/offset+octet-stream"]) { a, _ in a },
                    refused: notFound),
                Probe(
                    method: "PATCH", path: b.uploadPath, body: Data(repeating: 0x41, count: 10),
                    headers: tus.merging(["Upload-Offset": "0", "Content-Type": "application/offset+octet-stream"]) { a, _ in a },
                    refused: notFound),
            ],
            "DELETE /api/uploads/:id": [
                Probe(method: "DELETE", path: b.uploadPath, headers: tus, refused: notFound),
                Probe(method: "DELETE", path: "/api/uploads/\(doc)", headers: tus, refused: notFound),
            ],
            // Storage.
            "GET /storage/v1/object/:bucket/**": [
                Probe(method: "GET", path: "/storage/v1/object/documents/\(b.objectPath)", refused: notFound),
                Probe(
                    method: "GET", path: "/storage/v1/object/documents/\(b.objectPath)?download", headers: ["Range": "bytes=0-9"], refused: notFound),
            ],
            "GET /storage/v1/object/authenticated/:bucket/**": [
                Probe(method: "GET", path: "/storage/v1/object/authenticated/documents/\(b.objectPath)", refused: notFound)
            ],
            "GET /storage/v1/object/public/:bucket/**": [
                Probe(method: "GET", path: "/storage/v1/object/public/documents/\(b.objectPath)", refused: notFound)
            ],
            "POST /storage/v1/object/sign/:bucket/**": [
                Probe(method: "POST", path: "/storage/v1/object/sign/documents/\(b.objectPath)", json: ["expiresIn": 3600], refused: notFound)
            ],
            "GET /storage/v1/object/sign/:bucket/**": [
                // A signed download with a made-up token.
                Probe(
                    method: "GET", path: "/storage/v1/object/sign/documents/\(b.objectPath)?token=" + String(repeating: "A", count: 43),
                    refused: [400, 404])
            ],
        ]
    }
}
