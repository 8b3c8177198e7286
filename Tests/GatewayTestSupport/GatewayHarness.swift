import AppleStandIn
import Bus
import Contracts
import Crypto
import Foundation
import Locks
import TestSupport

/// The real Legal, Audit, Accounts, Documents and Gateway executables on a private database, with an HTTP
/// client of the gateway and bus clients for checking what the services stored.
public final class GatewayHarness: Sendable {
    public let database: TestDatabaseInstance
    public let http: HTTPClient
    public let httpPort: Int
    public let accountsClient: RPCClient
    public let auditClient: RPCClient
    public let legalClient: RPCClient
    public let gatewayEnvironment: [String: String]
    /// The SeaweedFS and bucket Documents writes new uploads to (`.s3` stacks only).
    public let objectStore: (server: SeaweedFS, bucket: String)?
    private let processes: LockedValue<[String: PeerProcess]>

    public static let jwtSecret = "gateway-tests-jwt-secret-0123456789abcdef"
    public static let gateway = Principal.service("gateway")
    /// The gateway's rate-limit rules, switched off by default in tests (`RateLimitTests` set them).
    public static let rateLimitVariables = [
        "GATEWAY_RATE_LIMIT_SIGN_IN_PER_IP", "GATEWAY_RATE_LIMIT_SIGN_IN_PER_USER",
        "GATEWAY_RATE_LIMIT_ACCEPT_PER_IP", "GATEWAY_RATE_LIMIT_ACCEPT_PER_USER", "GATEWAY_RATE_LIMIT_EXPORT_PER_USER",
    ]

    private init(
        database: TestDatabaseInstance, httpPort: Int, accountsClient: RPCClient, auditClient: RPCClient,
        legalClient: RPCClient, gatewayEnvironment: [String: String], objectStore: (server: SeaweedFS, bucket: String)?,
        processes: [String: PeerProcess]
    ) {
        self.database = database
        self.httpPort = httpPort
        self.http = HTTPClient(port: httpPort)
        self.accountsClient = accountsClient
        self.auditClient = auditClient
        self.legalClient = legalClient
        self.gatewayEnvironment = gatewayEnvironment
        self.objectStore = objectStore
        self.processes = LockedValue(processes)
    }

    /// Chunk size of Documents and of the gateway's reads and appends in tests: small enough that
    /// range reads and tus uploads cross chunk boundaries.
    public static let chunkSize = 256 * 1024

    /// Runs `body` with the five executables up on a fresh database; stops them afterwards.
    /// `gateway` adds to (or overrides) the gateway's environment, `accounts`, `audit` and
    /// `documents` the services'. Each service has database roles of its own, as deployments do
    /// (`DATABASE_URL` its runtime role's, `DATABASE_MIGRATION_URL` its schema owner's);
    /// `databasePassword`, when given, is the password of every one of them (the test cluster
    /// checks it), for tests that check it never reaches a log. Stacks run one at a time in the
    /// process (``StackGate``). With `storage` `.s3` Documents keeps new uploads in a bucket of this
    /// stack's own in `seaweed` (the test process's shared SeaweedFS unless a test that stops its
    /// store brings its own).
    public static func run(
        gateway extra: [String: String] = [:], accounts accountsExtra: [String: String] = [:], audit auditExtra: [String: String] = [:],
        documents documentsExtra: [String: String] = [:], databasePassword: String? = nil, storage: ByteStore = .postgres,
        seaweed: SeaweedFS? = nil, _ body: (GatewayHarness) async throws -> Void
    ) async throws {
        var documentsExtra = documentsExtra
        var objectStore: (server: SeaweedFS, bucket: String)?
        if storage == .s3 {
            let server: SeaweedFS
            if let seaweed { server = seaweed } else { server = try await SharedSeaweedFS.get() }
            let bucket = "gateway-" + UUID().uuidString.lowercased().prefix(18)
            try await server.makeBucket(bucket)
            objectStore = (server, bucket)
            documentsExtra = ByteStore.s3Environment(server, bucket: bucket).merging(documentsExtra) { _, given in given }
        }
        let (documents, store) = (documentsExtra, objectStore)
        try await StackGate.holding {
            try await runStack(
                gateway: extra, accounts: accountsExtra, audit: auditExtra, documents: documents, databasePassword: databasePassword,
                objectStore: store, body)
        }
    }

    private static func runStack(
        gateway extra: [String: String], accounts accountsExtra: [String: String], audit auditExtra: [String: String],
        documents documentsExtra: [String: String], databasePassword: String?, objectStore: (server: SeaweedFS, bucket: String)?,
        _ body: (GatewayHarness) async throws -> Void
    ) async throws {
        try await TestDatabase.withDatabase { database in
            func roles(_ schema: String) async throws -> [String: String] {
                try await database.serviceEnvironment(schema, password: databasePassword)
            }
            let (legalRPC, legalEvents, auditRPC, accountsRPC, accountsEvents) = (
                ipcEndpoint(), ipcEndpoint(), ipcEndpoint(), ipcEndpoint(), ipcEndpoint()
            )
            var legalEnvironment = ServiceEnvironment.make(databaseURL: database.url, rpc: legalRPC, events: legalEvents)
            legalEnvironment.merge(try await roles("legal")) { _, role in role }
            let legal = try await PeerProcess("Legal", environment: legalEnvironment)
            var auditEnvironment = ServiceEnvironment.audit(
                databaseURL: database.url, rpc: auditRPC, legalRPC: legalRPC, legalEvents: legalEvents,
                signingKey: Curve25519.Signing.PrivateKey().rawRepresentation.base64EncodedString())
            auditEnvironment.merge(try await roles("audit")) { _, role in role }
            auditEnvironment["ACCOUNTS_RPC_ENDPOINTS"] = accountsRPC
            auditEnvironment["ACCOUNTS_EVENTS_ENDPOINTS"] = accountsEvents
            for (key, value) in auditExtra { auditEnvironment[key] = value }
            let audit = try await PeerProcess("Audit", environment: auditEnvironment)
            var accountsEnvironment = ServiceEnvironment.make(databaseURL: database.url, rpc: accountsRPC, events: accountsEvents)
            accountsEnvironment.merge(try await roles("accounts")) { _, role in role }
            accountsEnvironment["LEGAL_RPC_ENDPOINTS"] = legalRPC
            accountsEnvironment["LEGAL_EVENTS_ENDPOINTS"] = legalEvents
            accountsEnvironment["AUDIT_RPC_ENDPOINTS"] = auditRPC
            // The deletion preview asks this stack's Documents, not whatever listens on the default port.
            let documentsRPC = ipcEndpoint()
            accountsEnvironment["DOCUMENTS_RPC_ENDPOINTS"] = documentsRPC
            accountsEnvironment["ACCOUNTS_APPLE_JWKS"] = AppleStandIn.jwksPath
            accountsEnvironment["ACCOUNTS_APPLE_BUNDLE_ID"] = AppleStandIn.bundleID
            accountsEnvironment["ACCOUNTS_SESSION_SIGNING_KEY"] = AppleStandIn.sessionSeed
            for (key, value) in accountsExtra { accountsEnvironment[key] = value }
            let accounts = try await PeerProcess("Accounts", environment: accountsEnvironment)
            var documentsEnvironment = ServiceEnvironment.make(databaseURL: database.url, rpc: documentsRPC, events: ipcEndpoint())
            documentsEnvironment.merge(try await roles("documents")) { _, role in role }
            documentsEnvironment["ACCOUNTS_RPC_ENDPOINTS"] = accountsRPC
            documentsEnvironment["ACCOUNTS_EVENTS_ENDPOINTS"] = accountsEvents
            documentsEnvironment["DOCUMENTS_CHUNK_SIZE"] = String(chunkSize)
            for (key, value) in documentsExtra { documentsEnvironment[key] = value }
            let documents = try await PeerProcess("Documents", environment: documentsEnvironment)
            var gatewayEnvironment = ProcessInfo.processInfo.environment
            gatewayEnvironment.removeValue(forKey: "DATABASE_URL")
            gatewayEnvironment["LEGAL_RPC_ENDPOINTS"] = legalRPC
            gatewayEnvironment["LEGAL_EVENTS_ENDPOINTS"] = legalEvents
            gatewayEnvironment["ACCOUNTS_EVENTS_ENDPOINTS"] = accountsEvents
            gatewayEnvironment["AUDIT_RPC_ENDPOINTS"] = auditRPC
            gatewayEnvironment["ACCOUNTS_RPC_ENDPOINTS"] = accountsRPC
            gatewayEnvironment["DOCUMENTS_RPC_ENDPOINTS"] = documentsRPC
            gatewayEnvironment["GATEWAY_DOCUMENTS_CHUNK_SIZE"] = String(chunkSize)
            gatewayEnvironment["GATEWAY_HTTP_PORT"] = "0"
            gatewayEnvironment["HEALTH_PORT"] = "0"
            gatewayEnvironment["LOG_LEVEL"] = "warning"
            gatewayEnvironment["GATEWAY_APPLE_BUNDLE_ID"] = AppleStandIn.bundleID
            gatewayEnvironment["GATEWAY_APPLE_JWKS"] = AppleStandIn.jwksPath
            gatewayEnvironment["GATEWAY_JWT_SECRET"] = jwtSecret
            gatewayEnvironment["GATEWAY_TRUSTED_PROXIES"] = "127.0.0.1"
            gatewayEnvironment["GATEWAY_BUS_TIMEOUT"] = "3s"
            // The tests read readiness and metrics on the API port.
            gatewayEnvironment["GATEWAY_PUBLIC_OPERATIONS"] = "true"
            gatewayEnvironment["READINESS_INTERVAL"] = "100ms"
            // Every test signs in and accepts from 127.0.0.1: limits only where a test sets them.
            for name in rateLimitVariables { gatewayEnvironment[name] = "off" }
            for (key, value) in extra { gatewayEnvironment[key] = value }
            let gateway = try await PeerProcess("Gateway", environment: gatewayEnvironment)
            let logger = testLogger()
            let harness = GatewayHarness(
                database: database, httpPort: try port(of: gateway),
                accountsClient: try await RPCClient.connect(to: "accounts", endpoints: [accountsRPC], logger: logger),
                auditClient: try await RPCClient.connect(to: "audit", endpoints: [auditRPC], logger: logger),
                legalClient: try await RPCClient.connect(to: "legal", endpoints: [legalRPC], logger: logger),
                gatewayEnvironment: gatewayEnvironment, objectStore: objectStore,
                processes: ["Legal": legal, "Audit": audit, "Accounts": accounts, "Documents": documents, "Gateway": gateway])
            let result: Result<Void, any Error>
            do { result = .success(try await body(harness)) } catch {
                result = .failure(error)
            }
            if case .failure = result {
                for (name, process) in harness.processes.withLock({ $0 }) { print("\(name) output:\n\(process.output)") }
            }
            await harness.accountsClient.close()
            await harness.auditClient.close()
            await harness.legalClient.close()
            for name in ["Gateway", "Documents", "Accounts", "Audit", "Legal"] { await harness.stop(name) }
            try result.get()
        }
    }

    public static func port(of gateway: PeerProcess) throws -> Int {
        guard let field = gateway.readyLine.split(separator: " ").first(where: { $0.hasPrefix("http=") }),
            let port = Int(field.dropFirst(5))
        else { throw TestSupportError("no http port in the ready line: \(gateway.readyLine)") }
        return port
    }

    /// SIGTERM, then a bounded wait; SIGKILL if it does not exit.
    public func stop(_ name: String) async {
        guard let process = processes.withLock({ $0.removeValue(forKey: name) }) else { return }
        process.signal(SIGTERM)
        if await process.waitForExit(timeout: .seconds(15)) == nil { process.kill() }
    }

    /// SIGTERM and a bounded wait like ``stop(_:)``; everything the process printed until it exited.
    public func stopCollectingOutput(_ name: String) async -> String {
        guard let process = processes.withLock({ $0.removeValue(forKey: name) }) else { return "" }
        process.signal(SIGTERM)
        if await process.waitForExit(timeout: .seconds(15)) == nil { process.kill() }
        return process.output
    }

    /// SIGKILL one service (to see the gateway's 503/504).
    public func kill(_ name: String) {
        processes.withLock { $0.removeValue(forKey: name) }?.kill()
    }

    /// Sends a signal to one service (SIGSTOP freezes it with its connections open).
    public func signal(_ name: String, _ number: Int32) {
        processes.withLock { $0[name] }?.signal(number)
    }

    /// The operating system's id of one running executable.
    public func pid(of name: String) -> Int32? { processes.withLock { $0[name]?.process.processIdentifier } }

    public func output(of name: String) -> String { processes.withLock { $0[name]?.output ?? "" } }

    /// The health port a process named in its ready line (`health=<port>`).
    public func healthPort(of name: String) throws -> Int {
        let process = processes.withLock { $0[name] }
        guard let port = process?.healthPort else {
            throw TestSupportError("no health port in the ready line of \(name): \(process?.readyLine ?? "")")
        }
        return port
    }

    // MARK: Helpers

    public func currentTerms() async throws -> String {
        try await legalClient.call(LegalCurrent.self, .init(type: .termsOfService)).summary.version
    }

    /// Signs in through the gateway with an Apple identity token; returns the reply's JSON.
    public func signIn(appleId: String) async throws -> [String: Any] {
        let reply = try await http.send("POST", "/api/auth/apple", json: ["identityToken": try AppleStandIn.token(subject: appleId)])
        guard reply.status == 200 else { throw TestSupportError("sign-in answered \(reply.status): \(reply.text)") }
        return reply.json
    }

    /// A signed-up user with a session: Apple sign-in, then the seed's sign-up with eligibility.
    public func signedUpUser(appleId: String = "apple." + UUID().uuidString, state: String = "AL") async throws -> (
        id: String, token: String, refresh: String
    ) {
        let session = try await signIn(appleId: appleId)
        let token = session["sessionToken"] as? String ?? ""
        let reply = try await http.send(
            "POST", "/api/users",
            json: [
                "apple_id": appleId, "email": "a@example.com", "name": "Alex", "state": state, "eligibility_certified": true,
                "tos_version": try await currentTerms(),
            ],
            headers: HTTPClient.bearer(token))
        guard reply.status == 200, let id = reply.json["id"] as? String else {
            throw TestSupportError("sign-up answered \(reply.status): \(reply.text)")
        }
        return (id, token, session["refreshToken"] as? String ?? "")
    }

    /// The gateway refuses a revoked session token within the event's delivery, at most its catch-up
    /// interval (`GATEWAY_SESSION_REVOCATION_POLL`, 1 s) when the revocation did not pass through it.
    public static let revocationBound: Duration = .milliseconds(1500)

    /// GETs `path` until it answers `status` or `within` has passed; the last status and how long it took.
    public func waitForStatus(_ status: Int, of path: String, headers: [String: String], within: Duration = revocationBound)
        async throws -> (status: Int, elapsed: Duration)
    {
        let start = ContinuousClock.now
        while true {
            let answer = try await http.get(path, headers: headers).status
            let elapsed = ContinuousClock.now - start
            if answer == status || elapsed > within { return (answer, elapsed) }
            try await Task.sleep(for: .milliseconds(20))
        }
    }

    /// How many users Accounts stores.
    public func userCount() async throws -> Int {
        try await database.pool.withConnection { db in try db.query("SELECT count(*)::bigint FROM accounts.users")[0].decode(Int.self, column: 0) }
    }

    public func sessionCount() async throws -> Int {
        try await database.pool.withConnection { db in try db.query("SELECT count(*)::bigint FROM accounts.sessions")[0].decode(Int.self, column: 0) }
    }
}
