import Bus
import Contracts
import Foundation
import HTTPTypes
import Hummingbird

/// The Supabase-compatible subset under `/rest/v1` that seeds 000–002 call with the official
/// Supabase client: reading `legal_documents` and the caller's `documents`, and inserting into
/// `legal_acceptances`.
///
/// Keys: Supabase clients send `apikey` and `Authorization: Bearer`. The `apikey` must be the
/// deployment's anon key or a session token (401 otherwise); the bearer token decides who the
/// caller is: the anon key reads public data only, a session token acts for its user.
/// An insert into `legal_acceptances` becomes an Audit record of the caller and no one else: a
/// row naming another `user_id` is refused as PostgREST refuses a row-level-security violation
/// (403, 42501). The row's `accepted_at` and `ip_address` are not trusted: the record gets the
/// time Audit commits it and the address the gateway saw.
struct PostgRESTRoutes {
    let services: ServiceClients
    let texts: LegalTexts
    let authenticator: Authenticator
    let limits: RateLimits
    let maxBodyBytes: Int
    /// Anon keys recently checked (``VerifiedAnonymousKeys``).
    let anonymousKeys = VerifiedAnonymousKeys()

    static let objectMediaType = "application/vnd.pgrst.object+json"
    static let apiKeyHeader = HTTPField.Name("apikey")!
    static let preferHeader = HTTPField.Name("Prefer")!

    struct AcceptanceRow: Decodable {
        let user_id: UUID
        let document_type: LegalDocumentType
        let version: String
        /// `accept`, `acknowledge` or `decline`; by default acknowledge for the privacy policy
        /// (seed 000) and accept for the terms (seed 001).
        let action: AcceptanceAction?
    }

    func register(on router: Router<GatewayContext>, catalog: RouteCatalog) {
        catalog.add(router, .get, "/rest/v1/legal_documents", "PostgREST: the legal documents in effect (select, type=eq., order, limit; object media type for .single()).", public: true) { request, context in
            _ = try await caller(request, context)
            return try await legalDocuments(request, context)
        }
        catalog.add(router, .get, "/rest/v1/documents", "PostgREST: the caller's documents (select, id=eq., type=eq., school_id=eq., order, limit; object media type for .single()).", public: false) { request, context in
            let query = try DocumentsTable.normalized(try PostgRESTQuery(rawQuery: request.uri.query))
            // Unknown columns are refused before anything is fetched.
            _ = try PostgRESTTable.apply(query, to: [], table: "documents", columns: DocumentsTable.columns)
            var rows: [[String: JSONValue]] = []
            // Row-level security: a session sees its own documents, the anon key none.
            if case .session(let userId?, _, _) = try await caller(request, context) {
                rows = try await DocumentsTable.rows(for: query, user: userId, services: services, context: context)
            }
            return try respond(try PostgRESTTable.apply(query, to: rows, table: "documents", columns: DocumentsTable.columns), request: request, status: .ok)
        }
        catalog.add(router, .post, "/rest/v1/legal_acceptances", "PostgREST: record the caller's acceptance (an Audit record); Prefer: return=representation.", public: false) { request, context in
            try limits.accept(from: context)
            guard case .session(let userId?, let appleId, _) = try await caller(request, context) else {
                throw PostgRESTError(status: .unauthorized, code: "42501", message: "permission denied for table legal_acceptances", hint: "sign in: the anon key cannot write")
            }
            let rows = try await decodeRows(request)
            guard !rows.isEmpty else { return try respond([], request: request, status: .created) }
            for row in rows where row.user_id != userId {
                throw PostgRESTError(status: .forbidden, code: "42501", message: "new row violates row-level security policy for table \"legal_acceptances\"")
            }
            try limits.accept(appleId: appleId, writes: rows.count)
            var inserted: [[String: JSONValue]] = []
            for (index, row) in rows.enumerated() {
                let action = row.action ?? (row.document_type == .privacyPolicy ? .acknowledge : .accept)
                let key = try IdempotencyKeys.key(of: request, scope: userId).map { "\($0):\(index)" }
                    ?? "rest:\(userId.uuidString.lowercased()):\(context.requestID):\(index)"
                let receipt = try await services.call(
                    .audit, AuditRecord.self,
                    .init(userId: userId, documentType: row.document_type, version: row.version, action: action,
                          clientIP: context.clientIP, userAgent: request.headers[.userAgent]),
                    principal: Credential.principal(for: userId), context: context, idempotencyKey: key)
                inserted.append([
                    "id": .string(receipt.recordId.uuidString.lowercased()), "user_id": .string(userId.uuidString.lowercased()),
                    "document_type": .string(receipt.documentType.rawValue), "version": .string(receipt.version),
                    "action": .string(receipt.action.rawValue), "accepted_at": .string(Timestamp.format(receipt.recordedAt)),
                    "content_sha256": .string(receipt.digest),
                ])
            }
            return try respond(inserted, request: request, status: .created)
        }
    }

    /// `legal_documents` from the gateway's copy of the texts in effect; the answer to each query
    /// is made once per set of texts and then served from memory. Before the copy is loaded, the
    /// rows are asked of Legal (only the types a `type=eq.` filter can match).
    func legalDocuments(_ request: Request, _ context: GatewayContext) async throws -> Response {
        let wantsObject = request.headers[.accept]?.contains(Self.objectMediaType) == true
        guard let snapshot = texts.snapshot() else {
            let query = try PostgRESTQuery(rawQuery: request.uri.query)
            var rows: [[String: JSONValue]] = []
            for type in LegalDocumentType.allCases {
                if let wanted = query.filters.first(where: { $0.column == "type" })?.value, wanted != type.rawValue { continue }
                let document = try await services.call(.legal, LegalCurrent.self, .init(type: type), principal: .anonymous, context: context)
                rows.append(LegalDocumentsTable.row(document))
            }
            return try respond(try LegalDocumentsTable.apply(query, to: rows), request: request, status: .ok)
        }
        let key = (wantsObject ? "object?" : "array?") + (request.uri.query ?? "")
        let answer: LegalTexts.RESTBody
        if let memoised = texts.restBody(key, generation: snapshot.generation) {
            answer = memoised
        } else {
            let query = try PostgRESTQuery(rawQuery: request.uri.query)
            let rows = try LegalDocumentsTable.apply(query, to: snapshot.texts.map(\.restRow))
            if wantsObject {
                guard rows.count == 1 else { throw PostgRESTError.notOneRow(rows.count) }
                answer = .init(body: ByteBuffer(bytes: try BusJSON.encode(JSONValue.object(rows[0]))), contentType: Self.objectMediaType)
            } else {
                answer = .init(body: ByteBuffer(bytes: try BusJSON.encode(JSONValue.array(rows.map { .object($0) }))), contentType: LegalResponses.json)
            }
            texts.remember(answer, for: key, generation: snapshot.generation)
        }
        return LegalResponses.respond(request, body: answer.body, contentType: answer.contentType, stale: snapshot.stale)
    }

    /// Checks `apikey` and the bearer token; the bearer token's credential (the anon key when none).
    func caller(_ request: Request, _ context: GatewayContext) async throws -> Credential {
        guard let apiKey = request.headers[Self.apiKeyHeader] else {
            throw PostgRESTError(status: .unauthorized, code: "PGRST301", message: "No API key found in request", hint: "send the anon key as apikey")
        }
        let keyCredential: Credential
        if anonymousKeys.contains(apiKey) {
            keyCredential = .anonymousKey
        } else {
            do { keyCredential = try await authenticator.credential(token: apiKey, context: context) } catch let error as BusError where error.code == .unauthenticated {
                throw PostgRESTError(status: .unauthorized, code: "PGRST301", message: "Invalid API key")
            }
            if case .anonymousKey = keyCredential { anonymousKeys.remember(apiKey) }
        }
        // Supabase clients without a signed-in user send the anon key twice (`apikey` and the
        // bearer): checked once, since checking the same key again can only give the same answer.
        if case .anonymousKey = keyCredential, request.headers[.authorization].flatMap(Self.bearerToken) == apiKey { return keyCredential }
        guard let bearer = try await authenticator.credential(of: request, context: context) else { return keyCredential }
        return bearer
    }

    /// The token of an `Authorization: Bearer <token>` value (nil for another scheme), trimmed
    /// as ``Authenticator`` trims it.
    static func bearerToken(_ header: String) -> String? {
        guard header.count > 7, header.prefix(7).lowercased() == "bearer " else { return nil }
        return Authenticator.trimmingOptionalWhitespace(header.dropFirst(7))
    }

    func decodeRows(_ request: Request) async throws -> [AcceptanceRow] {
        let data = try await JSONBodies.collect(request, limit: maxBodyBytes)
        let decoder = JSONDecoder()
        if let rows = try? decoder.decode([AcceptanceRow].self, from: data) { return rows }
        do { return [try decoder.decode(AcceptanceRow.self, from: data)] } catch let error as DecodingError {
            throw PostgRESTError(status: .badRequest, code: "PGRST102", message: "Invalid body: \(JSONBodies.describe(error))")
        }
    }

    /// Rows as JSON, or one object for `Accept: application/vnd.pgrst.object+json` (406 PGRST116
    /// unless exactly one row), or nothing for inserts under `Prefer: return=minimal` (the default).
    func respond(_ rows: [[String: JSONValue]], request: Request, status: HTTPResponse.Status) throws -> Response {
        let prefer = request.headers[values: Self.preferHeader].joined(separator: ",")
        if request.method == .post, !prefer.contains("return=representation") {
            return Response(status: status)
        }
        let wantsObject = request.headers[.accept]?.contains(Self.objectMediaType) == true
        if wantsObject {
            guard rows.count == 1 else { throw PostgRESTError.notOneRow(rows.count) }
            return try JSONBodies.response(JSONValue.object(rows[0]), status: status, headers: [.contentType: Self.objectMediaType])
        }
        return try JSONBodies.response(JSONValue.array(rows.map { .object($0) }), status: status)
    }
}
