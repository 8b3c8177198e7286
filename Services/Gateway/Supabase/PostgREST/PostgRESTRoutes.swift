import Bus
import Contracts
import Foundation
import GatewayService
import HTTPTypes
import Hummingbird

/// The Supabase-compatible subset under `/rest/v1` that seeds 000–002 call with the official
/// Supabase client: reading `legal_documents`, the caller's `documents` and `legal_acceptances`,
/// and inserting into `legal_acceptances`.
///
/// Every read is parsed and checked here the same way (``PostgRESTQuery``, against the table's
/// ``RestTableSchema``) and answered the same way (``PostgRESTReadAnswer``). Users' tables are
/// read by the service that owns them (`documents.select` / `audit.select`, in its SQL): only the
/// rows of the answer cross the bus. `legal_documents` runs over the gateway's copy of the texts
/// in effect (``InMemoryTable``). At most ``RestQuery/maximumRows`` rows per answer;
/// `Content-Range` always says which rows came (and of how many, with `Prefer: count=exact`; 206
/// when that is not all of them).
///
/// Keys: Supabase clients send `apikey` and `Authorization: Bearer`. The `apikey` must be the
/// deployment's anon key or a session token (401 otherwise); the bearer token decides who the
/// caller is: the anon key reads public data only, a session token acts for its user.
/// An insert into `legal_acceptances` is the caller's act and no one else's: a row naming another
/// `user_id` is refused as PostgREST refuses a row-level-security violation (403, 42501). Terms
/// accepts and declines go through Accounts exactly as the native accept does (so the user's
/// stored terms version follows); privacy-policy rows become Audit records. The row's
/// `accepted_at` and `ip_address` are not trusted: the record gets the time Audit commits it and
/// the address the gateway saw. A retried insert lands once with an `Idempotency-Key` header,
/// or with `Prefer: resolution=ignore-duplicates` (one record per user, document type, version
/// and action).
struct PostgRESTRoutes {
    let services: ServiceClients
    let texts: LegalTexts
    let authenticator: Authenticator
    let acceptances: AcceptanceBatcher
    let limits: RateLimits
    let maxBodyBytes: Int
    /// `file_url` as absolute signed links.
    let publicBase: PublicBaseURL
    let fileLinks: FileLinks
    /// Anon keys recently checked (``VerifiedAnonymousKeys``).
    let anonymousKeys = VerifiedAnonymousKeys()
    /// `legal_documents` answers already made from the texts in effect.
    let legalDocumentsAnswers = LegalDocumentsAnswers()

    /// Where the family's routes are (its router group's path).
    static let prefix = "/rest/v1"

    struct AcceptanceRow: Decodable {
        let user_id: UUID
        let document_type: LegalDocumentType
        let version: String
        /// `accept`, `acknowledge` or `decline`; by default acknowledge for the privacy policy
        /// (seed 000) and accept for the terms (seed 001).
        let action: AcceptanceAction?
    }

    /// A read of a user's table: `select`, `order`, `limit`, `offset`, `or`/`and` trees (column
    /// filters, `col=op.value`, are open-ended: the gateway README lists them), `Range` and `Prefer`.
    static let readDocs = RouteDocs(
        query: [
            ("select", RouteDocs.text), ("order", RouteDocs.text), ("limit", RouteDocs.integer(minimum: 0)),
            ("offset", RouteDocs.integer(minimum: 0)), ("or", RouteDocs.text), ("and", RouteDocs.text),
        ],
        headers: [("Range", RouteDocs.text), ("Range-Unit", RouteDocs.text), ("Prefer", RouteDocs.text)])

    /// Each route works out its caller itself (``caller(_:_:)``: the `apikey` and the bearer token, the anon key
    /// reading public data only); inserts take the per-address acceptance limit first.
    func register(on family: RouteFamily) {
        let reading = family.authenticated(by: authenticator)
        reading.add(
            .get, "/legal_documents",
            "PostgREST: the legal documents in effect, filtered, ordered, paged and counted (object media type for .single()).",
            public: true,
            docs: RouteDocs(query: [
                ("select", RouteDocs.text), ("type", RouteDocs.text), ("order", RouteDocs.text),
                ("limit", RouteDocs.integer(minimum: 0)), ("offset", RouteDocs.integer(minimum: 0)),
            ])
        ) { request, context in
            _ = try await caller(request, context)
            return try await legalDocuments(request, context)
        }
        reading.add(
            .get, "/documents", "PostgREST: the caller's documents, filtered, ordered, paged and counted in Documents' SQL.",
            public: false, docs: Self.readDocs
        ) { request, context in
            // Reading one's documents needs the terms in effect accepted (``TermsGate``); each row's
            // `file_url` goes out as an absolute signed link.
            let base = publicBase.base(for: request, context: context)
            return try await read(request, context, schema: DocumentsTable.schema, select: DocumentsTable.select, needsTerms: true) {
                fileLinks.presented(row: $0, base: base)
            }
        }
        reading.add(
            .get, "/legal_acceptances",
            "PostgREST: the caller's own acceptances (Audit's records), filtered, ordered, paged and counted in Audit's SQL.", public: false,
            docs: Self.readDocs
        ) { request, context in
            try await read(request, context, schema: LegalAcceptancesTable.schema, select: LegalAcceptancesTable.select)
        }
        family.group(AddressRateLimitMiddleware(limits: limits, limit: .accept)).authenticated(by: authenticator).add(
            .post, "/legal_acceptances",
            "PostgREST: record the caller's acceptance (terms through Accounts, privacy through Audit); Prefer: return=representation, resolution=ignore-duplicates; Idempotency-Key.",
            public: false, docs: RouteDocs(headers: [("Prefer", RouteDocs.text), ("Idempotency-Key", RouteDocs.text)], rateLimited: true)
        ) { request, context in
            try await insertAcceptances(request, context)
        }
    }

    typealias Select = @Sendable (RestQuery, UUID, ServiceClients, GatewayContext) async throws -> (rows: [[String: JSONValue]], total: Int?)

    /// A read of a user's table: parsed and checked here, run by the owning service; the anon key
    /// sees no rows (row-level security). `present` turns a stored row into what the client sees.
    func read(
        _ request: Request, _ context: GatewayContext, schema: RestTableSchema, select: Select, needsTerms: Bool = false,
        present: (@Sendable ([String: JSONValue]) -> [String: JSONValue])? = nil
    ) async throws -> Response {
        let (parsed, query) = try Self.query(request, schema: schema)
        var rows: [[String: JSONValue]] = []
        var total: Int? = query.count ? 0 : nil
        if case .session(let userId?, _, _) = try await caller(request, context) {
            if needsTerms { try await authenticator.terms.require(userId, context: context) }
            (rows, total) = try await select(query, userId, services, context)
        }
        if let present { rows = rows.map(present) }
        return try PostgRESTReadAnswer(
            parsed.project(rows), offset: query.offset, total: total, wantsObject: PostgRESTReadAnswer.wantsObject(request)
        ).response
    }

    /// The request's query, parsed and checked against `schema`, with its `Range` header and
    /// `Prefer: count=exact` folded in.
    static func query(_ request: Request, schema: RestTableSchema) throws -> (parsed: PostgRESTQuery, query: RestQuery) {
        let count = PostgRESTPreferences(request.headers).count
        return try PostgRESTError.converting { () throws(RestQueryError) in
            let parsed = try PostgRESTQuery(rawQuery: request.uri.query)
            return (parsed, try parsed.restQuery(for: schema, range: ItemRange(header: request.headers[.range]), count: count))
        }
    }

    /// `POST /rest/v1/legal_acceptances`: each row is the caller's act, recorded once per key.
    func insertAcceptances(_ request: Request, _ context: GatewayContext) async throws -> Response {
        guard case .session(let userId?, let appleId, let sessionId) = try await caller(request, context) else {
            throw PostgRESTError(
                status: .unauthorized, code: "42501", message: "permission denied for table legal_acceptances",
                hint: "sign in: the anon key cannot write")
        }
        let preferences = PostgRESTPreferences(request.headers)
        if preferences.resolution == .mergeDuplicates {
            throw PostgRESTError.badQuery(
                "resolution=merge-duplicates is not supported for legal_acceptances", details: "acceptances are append-only records",
                hint: "use resolution=ignore-duplicates (or an Idempotency-Key) to make a retried insert land once")
        }
        let rows = try await decodeRows(request)
        for row in rows where row.user_id != userId {
            throw PostgRESTError(
                status: .forbidden, code: "42501", message: "new row violates row-level security policy for table \"legal_acceptances\"")
        }
        if !rows.isEmpty { try limits.accept(appleId: appleId, writes: rows.count) }
        var inserted: [[String: JSONValue]] = []
        for (index, row) in rows.enumerated() {
            let action = row.action ?? (row.document_type == .privacyPolicy ? .acknowledge : .accept)
            let key = try AcceptanceKeys.key(
                of: request, user: userId, type: row.document_type, version: row.version, action: action,
                ignoreDuplicates: preferences.resolution == .ignoreDuplicates, index: index, requestID: context.requestID)
            if let receipt = try await record(action, row, key: key, user: userId, session: sessionId, request: request, context: context) {
                inserted.append(LegalAcceptancesTable.row(receipt, user: userId))
            } else if preferences.returns == .representation {
                inserted += try await LegalAcceptancesTable.select(
                    RestQuery(
                        filters: [
                            .condition(.init("document_type", .eq, [row.document_type.rawValue])), .condition(.init("version", .eq, [row.version])),
                            .condition(.init("action", .eq, [action.rawValue])),
                        ], order: [RestOrder("accepted_at", descending: true)], limit: 1),
                    user: userId, services: services, context: context
                ).rows
            }
        }
        guard preferences.returns == .representation else { return Response(status: .created) }
        return try JSONBodies.response(JSONValue.array(inserted.map { .object($0) }), status: .created)
    }

    /// Records one row: a terms accept through the ``AcceptanceBatcher`` (Accounts, as the native
    /// accept), a terms decline through ``TermsRecording/decline(_:sessionId:key:context:)``, anything else (the privacy
    /// policy) through Audit, whose receipt comes back. Nil when Accounts recorded it.
    func record(
        _ action: AcceptanceAction, _ row: AcceptanceRow, key: String, user: UUID, session: UUID, request: Request, context: GatewayContext
    ) async throws -> ConsentReceipt? {
        let terms = AccountsTermsRequest(userId: user, tosVersion: row.version, clientIP: context.clientIP, userAgent: request.headers[.userAgent])
        switch (row.document_type, action) {
        case (.termsOfService, .accept):
            _ = try await acceptances.accept(.init(request: terms, idempotencyKey: key), traceparent: context.traceparent)
            return nil
        case (.termsOfService, .decline):
            try await TermsRecording(services: services, sessions: authenticator.sessions).decline(
                terms, sessionId: session, key: key, context: context)
            return nil
        default:
            return try await services.call(
                .audit, AuditRecord.self,
                .init(
                    userId: user, documentType: row.document_type, version: row.version, action: action,
                    clientIP: context.clientIP, userAgent: request.headers[.userAgent]),
                principal: Credential.principal(for: user), context: context, idempotencyKey: key)
        }
    }

    /// `legal_documents` from the gateway's copy of the texts in effect; the answer to each
    /// request (its query, `Range`, `Prefer: count=exact` and media type) is made once per set of
    /// texts and then served from memory. Before the copy is loaded, the rows are asked of Legal.
    func legalDocuments(_ request: Request, _ context: GatewayContext) async throws -> Response {
        guard let snapshot = texts.snapshot() else {
            var rows: [[String: JSONValue]] = []
            for type in LegalDocumentType.allCases {
                do {
                    let document = try await services.call(.legal, LegalCurrent.self, .init(type: type), principal: .anonymous, context: context)
                    rows.append(LegalDocumentsTable.row(document))
                } catch let error as BusError where error.code == .notFound {
                    continue  // no version of this type in effect: no row
                }
            }
            return try Self.legalDocumentsAnswer(request, rows: rows).response
        }
        let key = [
            PostgRESTReadAnswer.wantsObject(request) ? "object" : "array", PostgRESTPreferences(request.headers).count ? "count" : "",
            request.headers[.range] ?? "", request.uri.query ?? "",
        ].joined(separator: "\n")
        let answer: PostgRESTReadAnswer
        if let memoised = legalDocumentsAnswers.answer(key, generation: snapshot.generation) {
            answer = memoised
        } else {
            answer = try Self.legalDocumentsAnswer(request, rows: snapshot.texts.map { LegalDocumentsTable.row($0.document) })
            legalDocumentsAnswers.remember(answer, for: key, generation: snapshot.generation)
        }
        var response = answer.response
        if snapshot.stale { response.headers[LegalResponses.staleHeader] = "true" }
        return response
    }

    static func legalDocumentsAnswer(_ request: Request, rows: [[String: JSONValue]]) throws -> PostgRESTReadAnswer {
        let (parsed, query) = try Self.query(request, schema: LegalDocumentsTable.schema)
        let (selected, total) = LegalDocumentsTable.table.select(query, from: rows)
        return try PostgRESTReadAnswer(
            parsed.project(selected), offset: query.offset, total: total, wantsObject: PostgRESTReadAnswer.wantsObject(request))
    }

    /// Checks `apikey`, then the bearer token (``AuthenticationMiddleware`` resolved it); the bearer
    /// token's credential (the anon key's when none is sent).
    func caller(_ request: Request, _ context: GatewayContext) async throws -> Credential {
        guard let apiKey = request.headers[SupabaseModule.apiKeyHeader] else {
            throw PostgRESTError(status: .unauthorized, code: "PGRST301", message: "No API key found in request", hint: "send the anon key as apikey")
        }
        let authentication = try context.authentication()
        // Supabase clients without a signed-in user send the anon key twice (`apikey` and the
        // bearer): checked once, since checking the same key again can only give the same answer.
        if case .verified(.apiKey, let token) = authentication, token == apiKey { return .apiKey }
        let keyCredential: Credential
        if anonymousKeys.contains(apiKey) {
            keyCredential = .apiKey
        } else {
            do { keyCredential = try await authenticator.credential(token: apiKey, context: context) } catch let error as BusError
                where error.code == .unauthenticated
            {
                throw PostgRESTError(status: .unauthorized, code: "PGRST301", message: "Invalid API key")
            }
            if case .apiKey = keyCredential { anonymousKeys.remember(apiKey) }
        }
        return try authentication.credential() ?? keyCredential
    }

    func decodeRows(_ request: Request) async throws -> [AcceptanceRow] {
        let data = try await JSONBodies.collect(request, limit: maxBodyBytes)
        let decoder = JSONDecoder()
        if let rows = try? decoder.decode([AcceptanceRow].self, from: data) { return rows }
        do { return [try decoder.decode(AcceptanceRow.self, from: data)] } catch let error as DecodingError {
            throw PostgRESTError(status: .badRequest, code: "PGRST102", message: "Invalid body: \(BusJSON.describe(error))")
        }
    }
}
