import Bus
import Contracts
import Foundation

/// `/openapi.json`: an OpenAPI 3.0 document built from the ``RouteCatalog`` the router was
/// registered with, so every served route appears in it by construction (a test checks it too).
///
/// Each operation gets its summary, its path parameters, the bearer security scheme unless public,
/// what its registration declares (``RouteDocs``: query and header parameters, the request body,
/// the success answer, a 429 and its `Retry-After` on rate-limited routes, 304), and the error
/// responses in the shape of its route family (``ErrorRenderer``). It knows no route by its path.
package enum OpenAPIDocument {
    static func build(_ entries: [RouteCatalog.Entry], version: String, modules: [String] = []) -> JSONValue {
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
                    "The HTTP edge of the Recruiting Compass backend: "
                        + (["seed 004's contract", "the native API (documents, byte ranges, tus uploads)", "public legal pages"] + modules)
                        .joined(separator: ", ") + "."),
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
        func optional(_ parameters: [RouteDocs.Parameter], in place: String) -> [JSONValue] {
            parameters.map { .object(["name": .string($0.name), "in": .string(place), "required": .bool(false), "schema": $0.schema]) }
        }
        if !entry.isPublic { operation["security"] = .array([.object(["bearer": .array([])])]) }
        let allParameters = pathParameters + optional(entry.docs.query, in: "query") + optional(entry.docs.headers, in: "header")
        if !allParameters.isEmpty { operation["parameters"] = .array(allParameters) }
        switch entry.docs.body(of: entry.method) {
        case .none: break
        case .uploadBytes(let required):
            operation["requestBody"] = .object([
                "required": .bool(required),
                "content": .object([
                    "application/offset+octet-stream": .object(["schema": .object(["type": .string("string"), "format": .string("binary")])])
                ]),
            ])
        case .json(let required):
            operation["requestBody"] = .object([
                "required": .bool(required),
                "content": .object(["application/json": .object(["schema": .object(["type": .string("object")])])]),
            ])
        }
        return .object(operation)
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
        var responses: [String: JSONValue] = ["default": error]
        if entry.docs.rateLimited {
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
        func body(_ type: String, _ schema: JSONValue) -> JSONValue {
            .object(["description": .string("Success."), "content": .object([type: .object(["schema": schema])])])
        }
        let binary: JSONValue = .object(["type": .string("string"), "format": .string("binary")])
        switch entry.docs.answer(of: entry.method) {
        case .bytes:
            let bytes: JSONValue = .object([
                "description": .string("The bytes (all, or the requested range)."),
                "content": .object(["application/octet-stream": .object(["schema": binary])]),
            ])
            responses["200"] = bytes
            responses["206"] = bytes
            responses["304"] = .object(["description": .string("Not modified: the client's ETag is the document's SHA-256.")])
            responses["416"] = .object([
                "description": .string("The range is past the end (Content-Range: bytes */<length>)."),
                "content": .object(["application/json": .object(["schema": .object(["$ref": .string("#/components/schemas/Error")])])]),
            ])
            return .object(responses)
        case .zip:
            responses["200"] = .object([
                "description": .string("The export: a ZIP archive (README.txt, manifest.json, documents/…), streamed."),
                "content": .object(["application/zip": .object(["schema": binary])]),
            ])
            return .object(responses)
        case .tus(let status):
            // tus answers with headers only.
            responses[String(status)] = .object(["description": .string("Done (see the tus headers).")])
            responses["412"] = .object(["description": .string("Tus-Resumable is not 1.0.0 (Tus-Version lists the versions spoken).")])
            return .object(responses)
        case .noContent:
            responses["204"] = .object(["description": .string("Done.")])
        case .json(let status):
            responses[String(status)] = body("application/json", .object([:]))
        case .text:
            responses["200"] = body("text/plain", .object(["type": .string("string")]))
        case .page:
            responses["200"] = body("text/html", .object(["type": .string("string")]))
            responses["503"] = .object([
                "description": .string(
                    "The document cannot be shown now (the gateway holds no copy and Legal is unreachable): a short HTML page, Retry-After."),
                "content": .object(["text/html": .object(["schema": .object(["type": .string("string")])])]),
            ])
            responses["304"] = .object(["description": .string("Not modified: the client's ETag is current.")])
        }
        if entry.docs.conditional {
            responses["304"] = .object(["description": .string("Not modified: the client's ETag is current.")])
        }
        return .object(responses)
    }
}
