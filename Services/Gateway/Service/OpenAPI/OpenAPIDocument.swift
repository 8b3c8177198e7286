import Bus
import Contracts
import Foundation

/// `/openapi.json`: an OpenAPI 3.0 document built from the ``RouteCatalog`` the router was
/// registered with, so every served route appears in it by construction (a test checks it too).
///
/// Each operation gets its summary, its path parameters, the bearer security scheme unless public,
/// a JSON request body for methods that take one, and the error responses in the shape of its
/// route family (``ErrorRenderer``), with a 429 and its `Retry-After` on rate-limited routes.
enum OpenAPIDocument {
    static func build(_ entries: [RouteCatalog.Entry], version: String) -> JSONValue {
        var paths: [String: [String: JSONValue]] = [:]
        for entry in entries {
            let path = openAPIPath(entry.path)
            paths[path, default: [:]][entry.method.lowercased()] = operation(entry)
        }
        return .object([
            "openapi": .string("3.0.3"),
            "info": .object([
                "title": .string("Recruiting Compass gateway"), "version": .string(version),
                "description": .string(
                    "The HTTP edge of the Recruiting Compass backend: seed 004's contract, the native API (documents, byte ranges, tus uploads), public legal pages and a Supabase-compatible subset (PostgREST and Storage)."
                ),
            ]),
            "paths": .object(paths.mapValues { .object($0) }),
            "components": .object([
                "securitySchemes": .object([
                    "bearer": .object(["type": .string("http"), "scheme": .string("bearer"), "bearerFormat": .string("JWT")])
                ]),
                "schemas": .object(schemas(entries)),
            ]),
        ])
    }

    /// `/api/users/:id/accept-tos` → `/api/users/{id}/accept-tos`; a trailing `**` (the rest of
    /// the path, Storage's object path) → `{path}`.
    static func openAPIPath(_ path: String) -> String {
        path.split(separator: "/", omittingEmptySubsequences: false).map { segment in
            segment == "**" ? "{path}" : segment.hasPrefix(":") ? "{" + segment.dropFirst() + "}" : String(segment)
        }.joined(separator: "/")
    }

    static func parameters(of path: String) -> [String] {
        path.split(separator: "/").filter { $0.hasPrefix(":") || $0 == "**" }.map { $0 == "**" ? "path" : String($0.dropFirst()) }
    }

    static func operation(_ entry: RouteCatalog.Entry) -> JSONValue {
        var operation: [String: JSONValue] = [
            "summary": .string(entry.summary),
            "operationId": .string(operationID(entry)),
            "responses": responses(entry),
        ]
        let pathParameters: [JSONValue] = parameters(of: entry.path).map { name in
            .object(["name": .string(name), "in": .string("path"), "required": .bool(true), "schema": .object(["type": .string("string")])])
        }
        // Query parameters are those of reads (a PostgREST insert takes its rows in the body).
        let reads = entry.method == "GET" || !entry.path.hasPrefix("/rest/v1/")
        let queryParameters: [JSONValue] = ((reads ? Self.queryParameters[entry.path] : nil) ?? []).map { name, schema in
            .object(["name": .string(name), "in": .string("query"), "required": .bool(false), "schema": schema])
        }
        if !entry.isPublic { operation["security"] = .array([.object(["bearer": .array([])])]) }
        let headerParameters: [JSONValue] = (Self.headerParameters[entry.method + " " + entry.path] ?? []).map { name, schema in
            .object(["name": .string(name), "in": .string("header"), "required": .bool(false), "schema": schema])
        }
        let allParameters = pathParameters + queryParameters + headerParameters
        if !allParameters.isEmpty { operation["parameters"] = .array(allParameters) }
        if entry.path.hasPrefix("/api/uploads") {
            // tus: the bytes, not JSON (optional on creation: creation-with-upload).
            if ["POST", "PATCH"].contains(entry.method) {
                operation["requestBody"] = .object([
                    "required": .bool(entry.method == "PATCH"),
                    "content": .object([
                        "application/offset+octet-stream": .object(["schema": .object(["type": .string("string"), "format": .string("binary")])])
                    ]),
                ])
            }
        } else if ["POST", "PUT", "PATCH"].contains(entry.method) {
            operation["requestBody"] = .object([
                "required": .bool(entry.path != "/api/auth/sign-out" && entry.path != "/auth/v1/logout"),
                "content": .object(["application/json": .object(["schema": .object(["type": .string("object")])])]),
            ])
        }
        return .object(operation)
    }

    /// The query parameters routes read, by route.
    static let queryParameters: [String: [(String, JSONValue)]] = [
        "/api/me/consents/history": [
            ("documentType", .object(["type": .string("string"), "enum": .array([.string("privacy_policy"), .string("terms_of_service")])])),
            ("limit", .object(["type": .string("integer"), "minimum": .int(1), "maximum": .int(Int64(PageLimit.consentHistoryRoute.maximum))])),
            ("before", .object(["type": .string("string")])),
        ],
        "/api/documents": [
            ("type", documentTypeSchema), ("schoolId", .object(["type": .string("string")])),
            ("limit", .object(["type": .string("integer"), "minimum": .int(1), "maximum": .int(Int64(PageLimit.documents.maximum))])),
            ("after", .object(["type": .string("string")])),
        ],
        "/api/documents/:reference/position": [("type", documentTypeSchema), ("schoolId", .object(["type": .string("string")]))],
        "/api/documents/:reference/content": [("download", .object(["type": .string("string")]))],
        "/storage/v1/object/:bucket/**": [("download", .object(["type": .string("string")]))],
        "/storage/v1/object/sign/:bucket/**": [("token", .object(["type": .string("string")])), ("download", .object(["type": .string("string")]))],
        "/rest/v1/documents": postgrestRead,
        "/rest/v1/legal_acceptances": postgrestRead,
        "/auth/v1/token": [("grant_type", .object(["type": .string("string"), "enum": .array([.string("id_token"), .string("refresh_token")])]))],
        "/auth/v1/logout": [
            ("scope", .object(["type": .string("string"), "enum": .array([.string("global"), .string("local"), .string("others")])]))
        ],
        "/rest/v1/legal_documents": [
            ("select", .object(["type": .string("string")])), ("type", .object(["type": .string("string")])),
            ("order", .object(["type": .string("string")])), ("limit", .object(["type": .string("integer"), "minimum": .int(0)])),
            ("offset", .object(["type": .string("integer"), "minimum": .int(0)])),
        ],
    ]

    /// A PostgREST read's query: `select`, `order`, `limit`, `offset`, `or`/`and` trees; column
    /// filters (`col=op.value`) are open-ended and documented in the gateway README.
    static let postgrestRead: [(String, JSONValue)] = [
        ("select", .object(["type": .string("string")])), ("order", .object(["type": .string("string")])),
        ("limit", .object(["type": .string("integer"), "minimum": .int(0)])), ("offset", .object(["type": .string("integer"), "minimum": .int(0)])),
        ("or", .object(["type": .string("string")])), ("and", .object(["type": .string("string")])),
    ]

    static let documentTypeSchema: JSONValue = .object([
        "type": .string("string"),
        "enum": .array(["highlight_video", "transcript", "resume", "rec_letter", "questionnaire", "stats_sheet"].map { .string($0) }),
    ])

    /// The request headers routes read (tus, byte ranges), by method and route.
    static let headerParameters: [String: [(String, JSONValue)]] = {
        let text: JSONValue = .object(["type": .string("string")])
        let tusVersion: JSONValue = .object(["type": .string("string"), "enum": .array([.string("1.0.0")])])
        let size: JSONValue = .object(["type": .string("integer"), "minimum": .int(0)])
        let ranges = [("Range", text), ("If-None-Match", text)]
        return [
            "POST /api/uploads": [("Tus-Resumable", tusVersion), ("Upload-Length", size), ("Upload-Metadata", text)],
            "HEAD /api/uploads/:id": [("Tus-Resumable", tusVersion)],
            "PATCH /api/uploads/:id": [("Tus-Resumable", tusVersion), ("Upload-Offset", size)],
            "DELETE /api/uploads/:id": [("Tus-Resumable", tusVersion)],
            "GET /api/documents/:reference/content": ranges,
            "GET /api/shared/:token": ranges,
            "POST /auth/v1/token": [("apikey", text), ("X-Supabase-Api-Version", text)],
            "POST /auth/v1/logout": [("apikey", text), ("X-Supabase-Api-Version", text)],
            "GET /auth/v1/user": [("apikey", text), ("X-Supabase-Api-Version", text)],
            "GET /storage/v1/object/:bucket/**": ranges,
            "GET /storage/v1/object/authenticated/:bucket/**": ranges,
            "GET /storage/v1/object/sign/:bucket/**": ranges,
            "GET /rest/v1/documents": [("Range", text), ("Range-Unit", text), ("Prefer", text)],
            "GET /rest/v1/legal_acceptances": [("Range", text), ("Range-Unit", text), ("Prefer", text)],
            "POST /rest/v1/legal_acceptances": [("Prefer", text), ("Idempotency-Key", text)],
        ]
    }()

    /// Routes whose success is a document's bytes (200 or 206, 304, 416).
    static func servesBytes(_ entry: RouteCatalog.Entry) -> Bool {
        entry.method == "GET"
            && (entry.path.hasSuffix("/content") || entry.path == "/api/shared/:token"
                || (entry.path.hasPrefix("/storage/v1/object/") && !entry.path.hasPrefix("/storage/v1/object/public/")))
    }

    static func operationID(_ entry: RouteCatalog.Entry) -> String {
        let words = entry.path.split(whereSeparator: { $0 == "/" || $0 == "-" || $0 == "." || $0 == ":" || $0 == "_" }).map(String.init)
        return entry.method.lowercased() + words.map { $0.prefix(1).uppercased() + $0.dropFirst() }.joined()
    }

    /// The error schemas the routes' families refer to, the native one always among them.
    static func schemas(_ entries: [RouteCatalog.Entry]) -> [String: JSONValue] {
        var schemas = NativeErrors().openAPIComponents
        for entry in entries { schemas.merge(entry.errors.openAPIComponents) { first, _ in first } }
        return schemas
    }

    static func responses(_ entry: RouteCatalog.Entry) -> JSONValue {
        let errorSchema = entry.errors.openAPISchema
        // A HEAD answer carries no body, so its errors document none.
        let error: JSONValue =
            entry.method == "HEAD"
            ? .object(["description": .string("An error (status only).")])
            : .object([
                "description": .string("An error (see the gateway README for the codes)."),
                "content": .object(["application/json": .object(["schema": errorSchema])]),
            ])
        let isPage = entry.path.hasPrefix("/legal/")
        let isMetrics = entry.path == "/metrics"
        let success: JSONValue = .object([
            "description": .string("Success."),
            "content": .object([
                isPage ? "text/html" : isMetrics ? "text/plain" : "application/json": .object([
                    "schema": isPage || isMetrics ? .object(["type": .string("string")]) : .object([:])
                ])
            ]),
        ])
        var responses: [String: JSONValue] = ["default": error]
        if isPage {
            responses["503"] = .object([
                "description": .string(
                    "The document cannot be shown now (the gateway holds no copy and Legal is unreachable): a short HTML page, Retry-After."),
                "content": .object(["text/html": .object(["schema": .object(["type": .string("string")])])]),
            ])
        }
        if RateLimits.guardedRoutes.contains(entry.method + " " + entry.path) {
            responses["429"] = .object([
                "description": .string(
                    "Rate limited (sign-in, acceptance writes or data exports, per address or per user): retry after Retry-After seconds."),
                "headers": .object([
                    "Retry-After": .object([
                        "description": .string("Whole seconds until the request would be allowed (at least 1)."),
                        "schema": .object(["type": .string("integer"), "minimum": .int(1)]),
                    ])
                ]),
                "content": .object(["application/json": .object(["schema": errorSchema])]),
            ])
        }
        if servesBytes(entry) {
            let bytes: JSONValue = .object([
                "description": .string("The bytes (all, or the requested range)."),
                "content": .object([
                    "application/octet-stream": .object(["schema": .object(["type": .string("string"), "format": .string("binary")])])
                ]),
            ])
            responses["200"] = bytes
            responses["206"] = bytes
            responses["304"] = .object(["description": .string("Not modified: the client's ETag is the document's SHA-256.")])
            responses["416"] = .object([
                "description": .string("The range is past the end (Content-Range: bytes */<length>)."),
                "content": .object(["application/json": .object(["schema": .object(["$ref": .string("#/components/schemas/Error")])])]),
            ])
            return .object(responses)
        }
        if entry.path == "/api/me/export" {
            responses["200"] = .object([
                "description": .string("The export: a ZIP archive (README.txt, manifest.json, documents/…), streamed."),
                "content": .object(["application/zip": .object(["schema": .object(["type": .string("string"), "format": .string("binary")])])]),
            ])
            return .object(responses)
        }
        if entry.path.hasPrefix("/api/uploads") {
            // tus answers with headers only.
            let status = ["OPTIONS": "204", "POST": "201", "HEAD": "200", "PATCH": "204", "DELETE": "204"][entry.method] ?? "200"
            responses[status] = .object(["description": .string("Done (see the tus headers).")])
            responses["412"] = .object(["description": .string("Tus-Resumable is not 1.0.0 (Tus-Version lists the versions spoken).")])
            return .object(responses)
        }
        let successStatus =
            entry.method == "DELETE" || entry.path == "/auth/v1/logout"
            ? "204"
            : entry.path == "/api/me/deletion" || entry.path.hasPrefix("/api/me/consents/:")
                || (entry.method == "POST" && (entry.path == "/api/documents" || entry.path.hasSuffix("/share-links"))) ? "201" : "200"
        responses[successStatus] = successStatus == "204" ? .object(["description": .string("Done.")]) : success
        if entry.method == "GET", entry.path.hasPrefix("/api/legal/") || isPage {
            responses["304"] = .object(["description": .string("Not modified: the client's ETag is current.")])
        }
        return .object(responses)
    }
}
