import Bus
import Contracts
import Foundation
import Identity
import Logging
import Postgres

/// Many users made at once for the benchmarks (`compass load users`, `compass load acceptances
/// --via accounts`, `deploy/bench-gateway`), stored exactly as Accounts' sign-up stores them, in
/// a minute instead of the hours 100,000 sign-ups in series take:
/// - one real sign-up first (`accounts.get_or_create`), whose stored row gives the state, the
///   eligibility rules version and minimum age every other user copies;
/// - each user's sign-up acceptance of the terms in effect recorded by Audit through its own path
///   (`audit.record_batch`, 1,000 a call, under the key Accounts uses for a sign-up,
///   `accounts.signup:<id>`), so every user has its receipt and takes the normal acceptance path;
/// - the user, its eligibility confirmation and one open session written into Accounts' schema as
///   its owner, with multi-row parameterised INSERTs (arrays through `unnest`), 2,000 users a
///   transaction.
/// Session tokens are minted with Accounts' signing key as Accounts mints them (subject the user
/// id, the session id, the Apple subject), so the gateway checks them itself; none has been
/// presented to the gateway yet.
struct BulkUsers {
    struct User: Sendable {
        let id: UUID
        let appleId: String
        let sessionId: UUID
    }

    let bus: BusAccess
    /// A URL whose role may write Accounts' tables: the schema's owner (or a superuser).
    let databaseURL: String
    let schema: String
    let logger: Logger

    static let clientIP = "203.0.113.7"
    static let userAgent = "compass-load"

    /// Makes `count` users; the terms version they accepted at sign-up, and the users.
    func make(count: Int, report: (String) -> Void) async throws -> (version: String, users: [User]) {
        guard schema.utf8.allSatisfy({ $0 == UInt8(ascii: "_") || (UInt8(ascii: "a")...UInt8(ascii: "z")).contains($0) }) else {
            throw CLIError("--schema \(schema) is not a schema name (a-z and _)")
        }
        let started = ContinuousClock.now
        let version = try await bus.call(LegalCurrent.self, .init(type: .termsOfService)).summary.version
        let template = try await signUpTemplate(version: version)
        let users = (0..<count).map { _ in User(id: UUID(), appleId: "compass-load.\(UUID().uuidString.lowercased())", sessionId: UUID()) }
        let receipts = try await recordSignups(users, version: version)
        report("recorded \(count) sign-up acceptances through audit.record_batch in \(started.duration(to: .now))")
        try await store(users, receipts: receipts, version: version, template: template)
        report("stored \(count) users, eligibility confirmations and sessions in \(started.duration(to: .now))")
        return (version, users)
    }

    /// What one real sign-up stored: state, rules version, minimum age.
    private struct Template: Sendable {
        let state: String
        let rulesVersion: String
        let minimumAge: Int
    }

    private func signUpTemplate(version: String) async throws -> Template {
        let signedUp = try await bus.call(
            AccountsGetOrCreate.self,
            .init(
                appleId: "compass-load.template.\(UUID().uuidString.lowercased())", email: "load@example.com", name: "Load Test",
                state: "AL", eligibilityCertified: true, tosVersion: version, clientIP: Self.clientIP, userAgent: Self.userAgent))
        guard let id = signedUp.id else { throw CLIError("accounts.get_or_create made no user") }
        let sql = """
            SELECT u.state, u.eligibility_rules_version, c.minimum_age FROM \(schema).users u
            JOIN \(schema).eligibility_confirmations c ON c.user_id = u.id WHERE u.id = $1
            """
        return try await withDatabase { db in
            guard let row = try db.query(sql, id).first else { throw CLIError("the signed-up user \(id) is not in \(schema).users") }
            let (state, rules, age) = try row.decode(String.self, String.self, Int.self)
            return Template(state: state, rulesVersion: rules, minimumAge: age)
        }
    }

    /// Each user's sign-up acceptance through Audit, four calls of 1,000 in flight; the receipts by user.
    private func recordSignups(_ users: [User], version: String) async throws -> [UUID: ConsentReceipt] {
        let client = try await bus.client(for: .audit)
        defer { Task { await client.close() } }
        let principal = bus.principal
        let chunks = stride(from: 0, to: users.count, by: AuditRecordBatch.maximumItems).map {
            Array(users[$0..<min($0 + AuditRecordBatch.maximumItems, users.count)])
        }
        return try await withThrowingTaskGroup(of: [(UUID, ConsentReceipt)].self) { group in
            var receipts: [UUID: ConsentReceipt] = [:]
            var next = 0
            func add() {
                guard next < chunks.count else { return }
                let chunk = chunks[next]
                next += 1
                group.addTask {
                    let items = chunk.map { user in
                        AuditRecordBatch.Item(
                            record: .init(
                                userId: user.id, documentType: .termsOfService, version: version, action: .accept,
                                clientIP: Self.clientIP, userAgent: Self.userAgent),
                            idempotencyKey: "accounts.signup:\(user.id.uuidString.lowercased())")
                    }
                    let reply = try await client.call(
                        AuditRecordBatch.self, .init(items: items, signReceipts: false), principal: principal, timeout: .seconds(60))
                    return try zip(chunk, reply.outcomes).map { user, outcome in (user.id, try outcome.get()) }
                }
            }
            for _ in 0..<4 { add() }
            while let done = try await group.next() {
                for (id, receipt) in done { receipts[id] = receipt }
                add()
            }
            return receipts
        }
    }

    private func store(_ users: [User], receipts: [UUID: ConsentReceipt], version: String, template: Template) async throws {
        let sessionLifetime = 30 * 24 * 3600  // Accounts' default ACCOUNTS_SESSION_LIFETIME
        let insertUsers = """
            INSERT INTO \(schema).users (id, apple_id, email, name, state, eligibility_confirmed_at, eligibility_rules_version,
                tos_version, tos_accepted_at, signup_receipt_id)
            SELECT id, apple_id, 'load@example.com', 'Load Test', $4, date_trunc('milliseconds', now()), $5, $6, accepted_at, receipt
            FROM unnest($1::uuid[], $2::text[], $3::uuid[], $7::timestamptz[]) AS u(id, apple_id, receipt, accepted_at)
            """
        let insertConfirmations = """
            INSERT INTO \(schema).eligibility_confirmations (user_id, state, rules_version, minimum_age, confirmed_at, client_ip, user_agent)
            SELECT id, state, eligibility_rules_version, $2, eligibility_confirmed_at, $3, $4 FROM \(schema).users WHERE id = ANY($1::uuid[])
            """
        let insertSessions = """
            INSERT INTO \(schema).sessions (id, user_id, apple_id, refresh_token_hash, expires_at, account_id)
            SELECT sid, id, apple_id, hash, now() + $5::bigint * interval '1 second', id
            FROM unnest($1::uuid[], $2::uuid[], $3::text[], $4::text[]) AS s(sid, id, apple_id, hash)
            """
        let times = ISO8601DateFormatter()
        times.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        for start in stride(from: 0, to: users.count, by: 2000) {
            let chunk = users[start..<min(start + 2000, users.count)]
            let ids = PostgresArrayLiteral.of(chunk.map { $0.id.uuidString.lowercased() })
            let appleIds = PostgresArrayLiteral.of(chunk.map(\.appleId))
            let receiptIds = PostgresArrayLiteral.of(chunk.map { receipts[$0.id]!.recordId.uuidString.lowercased() })
            let acceptedAt = PostgresArrayLiteral.of(chunk.map { times.string(from: receipts[$0.id]!.recordedAt) })
            let sessionIds = PostgresArrayLiteral.of(chunk.map { $0.sessionId.uuidString.lowercased() })
            // A refresh token nobody holds: the session exists as a sign-in leaves it, but only its token is used.
            let hashes = PostgresArrayLiteral.of(chunk.map { _ in RefreshToken.generate().hash })
            try await withDatabase { db in
                try db.transaction { db in
                    _ = try db.execute(
                        insertUsers, ids, appleIds, receiptIds, template.state, template.rulesVersion, version, acceptedAt)
                    _ = try db.execute(insertConfirmations, ids, template.minimumAge, Self.clientIP, Self.userAgent)
                    _ = try db.execute(insertSessions, sessionIds, ids, appleIds, hashes, sessionLifetime)
                }
            }
        }
    }

    private func withDatabase<T: Sendable>(_ body: @Sendable (isolated PostgresConnection) throws -> T) async throws -> T {
        try await PostgresConnection.using(
            configuration: try PostgresConfiguration(databaseURL, applicationName: "compass-load-users"), logger: logger
        ) { connection in try await connection.run(body) }
    }

    /// Each user's session token, signed with `keys` as Accounts signs them; `user_id token` lines.
    static func tokens(for users: [User], keys: SessionKeySet) async throws -> String {
        let tokens = SessionTokens(keys: keys)
        var lines: [String] = []
        lines.reserveCapacity(users.count)
        for user in users {
            let (token, _) = try await tokens.issue(
                userID: user.id.uuidString.lowercased(), sessionID: user.sessionId.uuidString.lowercased(), appleSubject: user.appleId)
            lines.append("\(user.id.uuidString.lowercased()) \(token)")
        }
        return lines.joined(separator: "\n") + "\n"
    }
}
