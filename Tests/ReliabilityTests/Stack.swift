import Bus
import Contracts
import Crypto
import Foundation
import Locks
import Postgres
import TestSupport

/// The four real service executables (Legal, Audit, Accounts, Documents) on one private database,
/// each on its own ipc addresses, with a client of each, and optionally the HTTP gateway in front
/// of them. Any service can be stopped, killed, frozen or started again on the same addresses, so
/// the fault tests break one piece at a time.
final class Stack: Sendable {
    /// The services in the order they start (each depends only on those before it).
    static let order = ["Legal", "Audit", "Accounts", "Documents"]
    /// Started last when asked for (``run(exclusive:gateway:settings:clientOptions:_:)``).
    static let gatewayName = "Gateway"

    let database: TestDatabaseInstance
    let environments: [String: [String: String]]
    let rpc: [String: String]
    let legal: RPCClient
    let audit: RPCClient
    let accounts: RPCClient
    let documents: RPCClient
    private let processes: LockedValue<[String: PeerProcess]>

    static let operatorPrincipal = Principal.operator("tests")
    static let gateway = Principal.service("gateway")

    private init(
        database: TestDatabaseInstance, environments: [String: [String: String]], rpc: [String: String],
        clients: [String: RPCClient], processes: [String: PeerProcess]
    ) {
        self.database = database
        self.environments = environments
        self.rpc = rpc
        self.legal = clients["Legal"]!
        self.audit = clients["Audit"]!
        self.accounts = clients["Accounts"]!
        self.documents = clients["Documents"]!
        self.processes = LockedValue(processes)
    }

    /// Runs `body` with every service up on a fresh database; stops them all afterwards, printing
    /// their output when `body` failed. `settings` adds to (or overrides) one service's
    /// environment; `clientOptions` is used by every client.
    ///
    /// With `exclusive` (the default) the stack has the test cluster to itself: four debug-built
    /// services under load take both cores, and the timing-sensitive tests of other targets
    /// (deadlines, heartbeats, first acknowledgements) must not run beside it. A caller already
    /// inside ``TestDatabase/withExclusiveCluster`` passes `false`. With `gateway` the HTTP gateway
    /// starts too, on a free port (``gatewayPort()``), as `Tests/GatewayTests` starts it.
    static func run(
        exclusive: Bool = true, gateway: Bool = false, settings: [String: [String: String]] = [:],
        clientOptions: RPCClientOptions = Stack.defaultClientOptions,
        _ body: (Stack) async throws -> Void
    ) async throws {
        guard exclusive else {
            return try await TestDatabase.withDatabase { database in try await run(database, gateway, settings, clientOptions, body) }
        }
        try await TestDatabase.withExclusiveCluster(maxConnections: 1) { _ in
            try await TestDatabase.withDatabase { database in try await run(database, gateway, settings, clientOptions, body) }
        }
    }

    /// The same on a database made elsewhere (``StandbyPair/withDatabase(maxConnections:_:)``), whose
    /// maker holds whatever gate it needs.
    static func run(on database: TestDatabaseInstance, _ body: (Stack) async throws -> Void) async throws {
        try await run(database, false, [:], defaultClientOptions, body)
    }

    static var defaultClientOptions: RPCClientOptions {
        var options = RPCClientOptions()
        options.defaultTimeout = .seconds(30)
        return options
    }

    private static func run(
        _ database: TestDatabaseInstance, _ withGateway: Bool, _ settings: [String: [String: String]],
        _ clientOptions: RPCClientOptions, _ body: (Stack) async throws -> Void
    ) async throws {
        let environments = try await makeEnvironments(database, withGateway, settings)
        let names = withGateway ? order + [gatewayName] : order
        var started: [String: PeerProcess] = [:]
        var clients: [String: RPCClient] = [:]
        let result: Result<Void, any Error>
        do {
            for name in names { started[name] = try await PeerProcess(name, environment: environments[name]!) }
            for name in order {
                clients[name] = try await RPCClient.connect(
                    to: name.lowercased(), endpoints: [environments[name]!["RPC_BIND"]!], options: clientOptions, logger: testLogger())
            }
            let stack = Stack(
                database: database, environments: environments, rpc: environments.compactMapValues { $0["RPC_BIND"] },
                clients: clients, processes: started)
            do { result = .success(try await body(stack)) } catch { result = .failure(error) }
            started = stack.processes.withLock { $0 }
        } catch {
            result = .failure(error)
        }
        if case .failure = result {
            for (name, process) in started { print("\(name) output:\n\(process.output.suffix(4000))") }
        }
        for client in clients.values { await client.close() }
        for name in names.reversed() {
            guard let process = started[name] else { continue }
            process.signal(SIGCONT)
            process.signal(SIGTERM)
            if await process.waitForExit(timeout: .seconds(15)) == nil { process.kill() }
        }
        try result.get()
    }

    /// Every service's environment: its own addresses plus its peers' (ipc sockets, so nothing
    /// collides with services of tests running in parallel), and its own database roles, as
    /// deployments have them (its runtime role's `DATABASE_URL`, its schema owner's
    /// `DATABASE_MIGRATION_URL`).
    private static func makeEnvironments(
        _ database: TestDatabaseInstance, _ withGateway: Bool, _ settings: [String: [String: String]]
    ) async throws -> [String: [String: String]] {
        var rpc: [String: String] = [:]
        var events: [String: String] = [:]
        for name in order { (rpc[name], events[name]) = (ipcEndpoint(), ipcEndpoint()) }
        var peers: [String: String] = [:]
        for name in order {
            peers["\(name.uppercased())_RPC_ENDPOINTS"] = rpc[name]
            peers["\(name.uppercased())_EVENTS_ENDPOINTS"] = events[name]
        }
        var result: [String: [String: String]] = [:]
        for name in order {
            var environment = try await ServiceEnvironment.make(
                database: database, schema: name.lowercased(), rpc: rpc[name]!, events: events[name]!, logLevel: "error")
            environment.merge(peers) { _, peer in peer }
            result[name] = environment
        }
        // Small pools: a stack then holds about 25 connections, beside every other test's.
        for name in ["Legal", "Accounts", "Documents"] { result[name]!["DATABASE_POOL_SIZE"] = "4" }
        result["Audit"]!["AUDIT_SIGNING_KEY"] = Curve25519.Signing.PrivateKey().rawRepresentation.base64EncodedString()
        result["Audit"]!["AUDIT_CHECKPOINT_INTERVAL"] = "1h"
        result["Accounts"]!["ACCOUNTS_APPLE_JWKS"] = emptyKeySet()
        result["Accounts"]!["ACCOUNTS_APPLE_BUNDLE_ID"] = "com.recruitingcompass.tests"
        result["Accounts"]!["ACCOUNTS_SESSION_SIGNING_KEY"] = Curve25519.Signing.PrivateKey().rawRepresentation.base64EncodedString()
        result["Accounts"]!["ACCOUNTS_ERASURE_SWEEP_INTERVAL"] = "200ms"
        if withGateway { result[gatewayName] = gatewayEnvironment(rpc, legalEvents: events["Legal"]!, accountsEvents: events["Accounts"]!) }
        for (name, extra) in settings { result[name]!.merge(extra) { _, given in given } }
        return result
    }

    /// The gateway's: the four services' request addresses, Legal's and Accounts' events, an HTTP port picked at each start,
    /// rate limits off, and seed 004's unauthenticated clients let through, so the load needs no sign-in (its
    /// requests then act as `service:gateway`, which Accounts lets accept for any user).
    private static func gatewayEnvironment(_ rpc: [String: String], legalEvents: String, accountsEvents: String) -> [String: String] {
        var environment = ProcessInfo.processInfo.environment
        environment.removeValue(forKey: "DATABASE_URL")
        for name in order { environment["\(name.uppercased())_RPC_ENDPOINTS"] = rpc[name] }
        environment["LEGAL_EVENTS_ENDPOINTS"] = legalEvents
        environment["ACCOUNTS_EVENTS_ENDPOINTS"] = accountsEvents
        environment["GATEWAY_HTTP_PORT"] = "0"
        environment["HEALTH_PORT"] = "0"
        environment["LOG_LEVEL"] = "error"
        environment["GATEWAY_LEGACY_UNAUTHENTICATED_CLIENTS"] = "true"
        environment["GATEWAY_BUS_TIMEOUT"] = "5s"
        environment["READINESS_INTERVAL"] = "100ms"
        // Every request comes from 127.0.0.1: the per-address limits would turn the load into
        // 429s. The limits have their own tests (`RateLimitTests`).
        for rule in ["SIGN_IN_PER_IP", "SIGN_IN_PER_USER", "ACCEPT_PER_IP", "ACCEPT_PER_USER"] {
            environment["GATEWAY_RATE_LIMIT_\(rule)"] = "off"
        }
        return environment
    }

    /// Accounts needs a key-set location to start; these tests never sign in with Apple.
    private static func emptyKeySet() -> String {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("reliability-jwks-\(UUID().uuidString).json").path
        try? Data(#"{"keys":[]}"#.utf8).write(to: URL(fileURLWithPath: path))
        return path
    }

    // MARK: Processes

    func process(_ name: String) -> PeerProcess? { processes.withLock { $0[name] } }

    /// SIGTERM, then a bounded wait; SIGKILL if it does not exit.
    func stop(_ name: String) async {
        guard let process = processes.withLock({ $0.removeValue(forKey: name) }) else { return }
        process.signal(SIGTERM)
        if await process.waitForExit(timeout: .seconds(15)) == nil { process.kill() }
    }

    /// SIGKILL: no shutdown code runs; whatever was in flight is cut off.
    func kill(_ name: String) {
        processes.withLock { $0.removeValue(forKey: name) }?.kill()
    }

    /// Starts `name` again with its environment (same addresses, database and keys).
    func start(_ name: String) async throws {
        let process = try await PeerProcess(name, environment: environments[name]!)
        processes.withLock { $0[name] = process }
    }

    /// The HTTP port of the running gateway (a new one after each start).
    func gatewayPort() throws -> Int {
        guard let line = process(Self.gatewayName)?.readyLine,
            let field = line.split(separator: " ").first(where: { $0.hasPrefix("http=") }), let port = Int(field.dropFirst(5))
        else { throw TestSupportError("the gateway is not running or printed no http port") }
        return port
    }

    // MARK: Calls

    func currentTerms() async throws -> String {
        try await legal.call(LegalCurrent.self, .init(type: .termsOfService)).summary.version
    }

    func signUpRequest(appleId: String, terms: String) -> AccountsGetOrCreate.Request {
        .init(
            appleId: appleId, email: "a@example.com", name: "Alex Athlete", state: "CA", eligibilityCertified: true,
            tosVersion: terms, clientIP: "203.0.113.9", userAgent: "reliability-tests")
    }

    /// A complete sign-up; returns the new user's id.
    func signUp(terms: String? = nil) async throws -> UUID {
        var version = terms ?? ""
        if terms == nil { version = try await currentTerms() }
        let user = try await accounts.call(
            AccountsGetOrCreate.self, signUpRequest(appleId: "apple." + UUID().uuidString, terms: version), principal: Self.gateway)
        guard let id = user.id else { throw TestSupportError("sign-up returned no user id") }
        return id
    }

    /// Requests and confirms the deletion of `user`'s account: Accounts publishes `account.deleted`.
    func deleteAccount(_ user: UUID) async throws {
        let principal = Principal.user(user.uuidString.lowercased())
        let request = try await accounts.call(AccountsRequestDeletion.self, .init(userId: user), principal: principal)
        _ = try await accounts.call(AccountsConfirmDeletion.self, .init(userId: user, requestId: request.requestId), principal: principal)
    }

    /// One integer from a query on the stack's database.
    func count(_ sql: String, _ parameters: (any PostgresEncodable)?...) async throws -> Int {
        try await withDatabase { db in try db.query(sql, parameters: parameters)[0].decode(Int.self, column: 0) }
    }

    /// Runs `body` on a connection of the test's own pool, again on a fresh one when the one it
    /// got was cut (a fault test may have terminated or restarted the server under the pool).
    func withDatabase<T: Sendable>(_ body: @Sendable (isolated PostgresConnection) throws -> T) async throws -> T {
        var attempt = 0
        while true {
            attempt += 1
            do { return try await database.pool.withConnection(body) } catch let error as PostgresError
                where error.isConnectionFailure && attempt < 10
            {
                try await Task.sleep(for: .milliseconds(100))
            }
        }
    }
}
