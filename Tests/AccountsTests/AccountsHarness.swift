import AppleStandIn
import Bus
import Contracts
import Crypto
import Foundation
import Locks
import TestSupport

/// The real Legal, Audit and Accounts executables on a private database, with clients of each:
/// what the Accounts tests run against. Accounts can be restarted with other eligibility rules.
final class AccountsHarness: Sendable {
    let database: TestDatabaseInstance
    let legalRPC: String
    let auditRPC: String
    let accountsRPC: String
    let legalClient: RPCClient
    let auditClient: RPCClient
    let accountsClient: RPCClient
    let auditEnvironment: [String: String]
    private let processes: LockedValue<[String: PeerProcess]>

    static let operatorPrincipal = Principal.operator("tests")
    /// What the gateway asserts when it calls get_or_create (no session exists yet).
    static let gateway = Principal.service("gateway")

    private init(
        database: TestDatabaseInstance, legalRPC: String, auditRPC: String, accountsRPC: String,
        legalClient: RPCClient, auditClient: RPCClient, accountsClient: RPCClient, auditEnvironment: [String: String],
        processes: [String: PeerProcess]
    ) {
        self.auditEnvironment = auditEnvironment
        self.database = database
        self.legalRPC = legalRPC
        self.auditRPC = auditRPC
        self.accountsRPC = accountsRPC
        self.legalClient = legalClient
        self.auditClient = auditClient
        self.accountsClient = accountsClient
        self.processes = LockedValue(processes)
    }

    /// Runs `body` with the three services up on a fresh database (Accounts with `rules`, a path
    /// of a rules file, or the shipped rules); stops them afterwards.
    /// `extra` is added to Accounts' environment (``restartAccounts(rules:extra:)`` takes its own).
    static func run(rules: String? = nil, extra: [String: String] = [:], _ body: (AccountsHarness) async throws -> Void) async throws {
        try await TestDatabase.withDatabase { database in
            let (legalRPC, legalEvents, auditRPC, accountsRPC) = (ipcEndpoint(), ipcEndpoint(), ipcEndpoint(), ipcEndpoint())
            let accountsEvents = ipcEndpoint()
            var legalEnvironment = environment(database, rpc: legalRPC)
            legalEnvironment["EVENTS_BIND"] = legalEvents
            let legal = try await PeerProcess("Legal", environment: legalEnvironment)
            var auditEnvironment = ServiceEnvironment.audit(
                databaseURL: database.url, rpc: auditRPC, legalRPC: legalRPC, legalEvents: legalEvents,
                signingKey: Curve25519.Signing.PrivateKey().rawRepresentation.base64EncodedString())
            // Audit follows account.deleted from this Accounts instance.
            auditEnvironment["ACCOUNTS_RPC_ENDPOINTS"] = accountsRPC
            auditEnvironment["ACCOUNTS_EVENTS_ENDPOINTS"] = accountsEvents
            let audit = try await PeerProcess("Audit", environment: auditEnvironment)
            var accountsEnvironment = accountsEnvironment(database, rpc: accountsRPC, legal: legalRPC, audit: auditRPC, rules: rules)
            accountsEnvironment.merge(extra) { $1 }
            accountsEnvironment["EVENTS_BIND"] = accountsEvents
            accountsEnvironment["LEGAL_EVENTS_ENDPOINTS"] = legalEvents
            let accounts = try await PeerProcess("Accounts", environment: accountsEnvironment)
            let logger = testLogger()
            let harness = AccountsHarness(
                database: database, legalRPC: legalRPC, auditRPC: auditRPC, accountsRPC: accountsRPC,
                legalClient: try await RPCClient.connect(to: "legal", endpoints: [legalRPC], logger: logger),
                auditClient: try await RPCClient.connect(to: "audit", endpoints: [auditRPC], logger: logger),
                accountsClient: try await RPCClient.connect(to: "accounts", endpoints: [accountsRPC], logger: logger),
                auditEnvironment: auditEnvironment,
                processes: ["Legal": legal, "Audit": audit, "Accounts": accounts])
            let result: Result<Void, any Error>
            do { result = .success(try await body(harness)) } catch {
                result = .failure(error)
                for (name, process) in harness.processes.withLock({ $0 }) { print("\(name) output:\n\(process.output)") }
            }
            await harness.legalClient.close()
            await harness.auditClient.close()
            await harness.accountsClient.close()
            for name in ["Accounts", "Audit", "Legal"] { await harness.stop(name) }
            try result.get()
        }
    }

    static func environment(_ database: TestDatabaseInstance, rpc: String) -> [String: String] {
        ServiceEnvironment.make(databaseURL: database.url, rpc: rpc)
    }

    static func accountsEnvironment(
        _ database: TestDatabaseInstance, rpc: String, legal: String, audit: String, rules: String?
    ) -> [String: String] {
        var environment = environment(database, rpc: rpc)
        environment["LEGAL_RPC_ENDPOINTS"] = legal
        environment["AUDIT_RPC_ENDPOINTS"] = audit
        environment["ACCOUNTS_ERASURE_SWEEP_INTERVAL"] = "200ms"
        environment["ACCOUNTS_APPLE_JWKS"] = AppleStandIn.jwksPath
        environment["ACCOUNTS_APPLE_BUNDLE_ID"] = AppleStandIn.bundleID
        environment["ACCOUNTS_SESSION_SIGNING_KEY"] = AppleStandIn.sessionSeed
        // Nothing listens here: the tests run without a Documents service (the degraded preview).
        environment["DOCUMENTS_RPC_ENDPOINTS"] = ipcEndpoint()
        environment["ACCOUNTS_DOCUMENTS_USAGE_TIMEOUT"] = "300ms"
        environment["ACCOUNTS_APPLE_REVOKE_SWEEP_INTERVAL"] = "100ms"
        if let rules { environment["ACCOUNTS_ELIGIBILITY_RULES"] = rules }
        return environment
    }

    /// What the running process `name` has printed so far (empty if it is not running).
    func output(of name: String) -> String {
        processes.withLock { $0[name] }?.output ?? ""
    }

    /// SIGTERM, then a bounded wait; SIGKILL if it does not exit.
    func stop(_ name: String) async {
        guard let process = processes.withLock({ $0.removeValue(forKey: name) }) else { return }
        process.signal(SIGTERM)
        if await process.waitForExit(timeout: .seconds(15)) == nil { process.kill() }
    }

    /// SIGKILL (kill -9: a crash, nothing finished), then waits for the exit.
    func kill(_ name: String) async {
        guard let process = processes.withLock({ $0.removeValue(forKey: name) }) else { return }
        process.kill()
        _ = await process.waitForExit(timeout: .seconds(15))
    }

    /// Restarts Accounts on the same address and database, with other rules and `extra` settings.
    func restartAccounts(rules: String?, extra: [String: String] = [:]) async throws {
        await stop("Accounts")
        var environment = Self.accountsEnvironment(database, rpc: accountsRPC, legal: legalRPC, audit: auditRPC, rules: rules)
        environment.merge(extra) { $1 }
        environment["EVENTS_BIND"] = auditEnvironment["ACCOUNTS_EVENTS_ENDPOINTS"]
        environment["LEGAL_EVENTS_ENDPOINTS"] = auditEnvironment["LEGAL_EVENTS_ENDPOINTS"]
        let process = try await PeerProcess("Accounts", environment: environment)
        processes.withLock { $0["Accounts"] = process }
    }

    /// Starts Audit again (after ``stop(_:)``) with the same key, database and addresses.
    func startAudit() async throws {
        let process = try await PeerProcess("Audit", environment: auditEnvironment)
        processes.withLock { $0["Audit"] = process }
    }

    // MARK: Calls

    func getOrCreate(_ request: AccountsGetOrCreate.Request) async throws -> AccountUser {
        try await accountsClient.call(AccountsGetOrCreate.self, request, principal: Self.gateway, timeout: .seconds(30))
    }

    /// A complete sign-up in an allowed state with the terms in effect.
    func signUp(
        appleId: String = "apple." + UUID().uuidString, state: String = "CA", email: String? = "a@example.com",
        name: String? = "Alex Athlete"
    ) async throws -> AccountUser {
        let version = try await currentTerms()
        return try await getOrCreate(
            .init(
                appleId: appleId, email: email, name: name, state: state, eligibilityCertified: true, tosVersion: version,
                clientIP: "203.0.113.9", userAgent: "PlayoffChallenge/1.0 iOS"))
    }

    func signIn(_ token: String, email: String? = nil) async throws -> AccountsSignInWithApple.Reply {
        try await accountsClient.call(
            AccountsSignInWithApple.self, .init(identityToken: token, email: email, clientIP: "203.0.113.9", userAgent: "PlayoffChallenge/1.0 iOS"),
            principal: Self.gateway, timeout: .seconds(30))
    }

    func verifySession(_ token: String) async throws -> AccountsVerifySession.Reply {
        try await accountsClient.call(AccountsVerifySession.self, .init(sessionToken: token), principal: Self.gateway)
    }

    func refreshSession(_ token: String) async throws -> SessionGrant {
        try await accountsClient.call(AccountsRefreshSession.self, .init(refreshToken: token), principal: Self.gateway)
    }

    /// How many rows `sessions` holds.
    func sessionRows() async throws -> Int {
        try await database.pool.withConnection { db in try db.query("SELECT count(*)::bigint FROM accounts.sessions")[0].decode(Int.self, column: 0) }
    }

    func get(_ id: UUID, as principal: Principal? = nil) async throws -> AccountUser {
        try await accountsClient.call(AccountsGet.self, .init(userId: id), principal: principal ?? .user(id.uuidString))
    }

    func accept(_ id: UUID, _ version: String, key: String = UUID().uuidString) async throws -> AccountUser {
        try await accountsClient.call(
            AccountsAcceptTerms.self, .init(userId: id, tosVersion: version, clientIP: "198.51.100.4", userAgent: "PlayoffChallenge/1.0"),
            principal: .user(id.uuidString), idempotencyKey: key, timeout: .seconds(30))
    }

    func decline(_ id: UUID, _ version: String) async throws -> AccountUser {
        try await accountsClient.call(
            AccountsDeclineTerms.self, .init(userId: id, tosVersion: version, clientIP: "198.51.100.4"),
            principal: .user(id.uuidString), timeout: .seconds(30))
    }

    /// What the gateway enforces the terms by (`accounts.terms_standing`).
    func standing(_ id: UUID) async throws -> AccountsTermsStanding.Reply {
        try await accountsClient.call(AccountsTermsStanding.self, .init(userId: id), principal: Self.gateway)
    }

    func currentTerms() async throws -> String {
        try await legalClient.call(LegalCurrent.self, .init(type: .termsOfService)).summary.version
    }

    /// Publishes a terms version through Legal, as an operator; in effect at once unless `effectiveAt`.
    func publishTerms(_ version: String, material: Bool, effectiveAt: Date? = nil) async throws {
        _ = try await legalClient.call(
            LegalPublish.self,
            .init(
                type: .termsOfService, version: version, content: "# Terms \(version)\n\n## 1. Text\n\nVersion \(version).\n",
                effectiveAt: effectiveAt, material: material),
            principal: Self.operatorPrincipal)
    }

    /// Audit's record of a user's terms, as a service sees it, once Audit has chained every act
    /// Accounts has stored (``waitForChained()``).
    func auditHistory(_ id: UUID) async throws -> [AcceptanceRecord] {
        try await waitForChained()
        return try await auditClient.call(AuditHistory.self, .init(userId: id, documentType: .termsOfService), principal: .service("tests")).records
    }

    /// Waits (bounded) until Audit's status of `id` shows `version` as the terms in effect.
    func waitForAuditToLearn(_ version: String, user id: UUID) async throws {
        try await withTimeout(.seconds(20), "audit learning terms \(version)") { [auditClient] in
            while true {
                let status = try await auditClient.call(AuditStatus.self, .init(userId: id), principal: .service("tests"))
                if status.documents.contains(where: { $0.documentType == .termsOfService && $0.currentVersion == version }) { return }
                try await Task.sleep(for: .milliseconds(50))
            }
        }
    }

    /// Waits (bounded) until Accounts' consent stream is empty: Audit has chained every act and
    /// deletion Accounts stored, and Accounts has pruned them.
    func waitForChained(timeout: Duration = .seconds(30)) async throws {
        try await withTimeout(timeout, "audit chaining the consent stream") { [database] in
            while true {
                let waiting = try await database.pool.withConnection { db in
                    try db.query("SELECT count(*)::bigint FROM accounts.consent_outbox")[0].decode(Int.self, column: 0)
                }
                if waiting == 0 { return }
                try await Task.sleep(for: .milliseconds(20))
            }
        }
    }
}
