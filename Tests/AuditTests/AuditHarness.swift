import Bus
import Contracts
import Crypto
import Foundation
import Locks
import Postgres
import TestSupport
import Testing

/// The real Legal and Audit executables on a private database, with clients of both: what the
/// Audit tests run against. Audit can be stopped and started again (catch-up tests).
final class AuditHarness: Sendable {
    let database: TestDatabaseInstance
    let legal: PeerProcess
    let legalRPC: String
    let legalEvents: String
    let auditRPC: String
    let signingKey: String
    /// Audit's `DATABASE_URL` and `DATABASE_MIGRATION_URL` (its own roles), kept for restarts.
    let auditRoles: [String: String]
    let legalClient: RPCClient
    let auditClient: RPCClient
    private let auditProcess: LockedValue<PeerProcess?>

    static let operatorPrincipal = Principal.operator("tests")

    private init(
        database: TestDatabaseInstance, legal: PeerProcess, legalRPC: String, legalEvents: String, auditRPC: String,
        signingKey: String, auditRoles: [String: String], legalClient: RPCClient, auditClient: RPCClient, audit: PeerProcess
    ) {
        self.database = database
        self.legal = legal
        self.legalRPC = legalRPC
        self.legalEvents = legalEvents
        self.auditRPC = auditRPC
        self.signingKey = signingKey
        self.auditRoles = auditRoles
        self.legalClient = legalClient
        self.auditClient = auditClient
        self.auditProcess = LockedValue(audit)
    }

    /// Runs `body` with both services up on a fresh database; stops them afterwards.
    static func run(writers: Int = 4, _ body: (AuditHarness) async throws -> Void) async throws {
        try await TestDatabase.withDatabase { database in
            let (legalRPC, legalEvents, auditRPC) = (ipcEndpoint(), ipcEndpoint(), ipcEndpoint())
            let legal = try await PeerProcess(
                "Legal", environment: try await ServiceEnvironment.make(database: database, schema: "legal", rpc: legalRPC, events: legalEvents))
            let key = Curve25519.Signing.PrivateKey().rawRepresentation.base64EncodedString()
            // Audit's roles, made once: a restarted Audit connects with the same ones.
            let auditRoles = try await database.serviceEnvironment("audit")
            let auditEnvironment = auditEnvironment(
                database, roles: auditRoles, rpc: auditRPC, legalRPC: legalRPC, legalEvents: legalEvents, key: key, writers: writers)
            let audit = try await PeerProcess("Audit", environment: auditEnvironment)
            let logger = testLogger()
            let legalClient = try await RPCClient.connect(to: "legal", endpoints: [legalRPC], logger: logger)
            let auditClient = try await RPCClient.connect(to: "audit", endpoints: [auditRPC], logger: logger)
            let harness = AuditHarness(
                database: database, legal: legal, legalRPC: legalRPC, legalEvents: legalEvents, auditRPC: auditRPC,
                signingKey: key, auditRoles: auditRoles, legalClient: legalClient, auditClient: auditClient, audit: audit)
            let result: Result<Void, any Error>
            do { result = .success(try await body(harness)) } catch {
                result = .failure(error)
                print("legal output:\n\(legal.output)\naudit output:\n\(harness.auditOutput)")
            }
            await legalClient.close()
            await auditClient.close()
            await harness.stopAudit()
            legal.signal(SIGTERM)
            if await legal.waitForExit(timeout: .seconds(10)) == nil { legal.kill() }
            try result.get()
        }
    }

    var auditOutput: String { auditProcess.withLock { $0?.output ?? "" } }

    /// The running Audit process (nil while stopped).
    var audit: PeerProcess? { auditProcess.withLock { $0 } }

    /// SIGTERM, and waits for it to exit (the graceful shutdown is bounded by the service), sleeping
    /// rather than blocking a pool thread in `waitUntilExit` (ProcessExit.swift says why).
    func stopAudit() async {
        guard let process = auditProcess.withLock({ $0 }) else { return }
        process.signal(SIGTERM)
        if await !process.waitUntilEnded(timeout: .seconds(30)) {
            Issue.record("Audit did not stop within 30 s of SIGTERM")
            process.kill()
        }
        auditProcess.withLock { $0 = nil }
    }

    /// SIGKILL: no shutdown code runs; whatever was in flight is cut off.
    func killAudit() {
        guard let process = auditProcess.withLock({ $0 }) else { return }
        process.kill()
        auditProcess.withLock { $0 = nil }
    }

    func startAudit(writers: Int = 4) async throws {
        let process = try await PeerProcess(
            "Audit",
            environment: Self.auditEnvironment(
                database, roles: auditRoles, rpc: auditRPC, legalRPC: legalRPC, legalEvents: legalEvents, key: signingKey, writers: writers))
        auditProcess.withLock { $0 = process }
    }

    /// A second Audit instance on the same database, writing `writers` chains from `chainOffset`,
    /// and a client of it. The caller kills the process and closes the client.
    func startAnotherAudit(writers: Int, chainOffset: Int) async throws -> (process: PeerProcess, client: RPCClient) {
        let rpc = ipcEndpoint()
        var environment = Self.auditEnvironment(
            database, roles: auditRoles, rpc: rpc, legalRPC: legalRPC, legalEvents: legalEvents, key: signingKey, writers: writers)
        environment["AUDIT_CHAIN_OFFSET"] = String(chainOffset)
        let process = try await PeerProcess("Audit", environment: environment)
        do {
            return (process, try await RPCClient.connect(to: "audit", endpoints: [rpc], logger: testLogger()))
        } catch {
            process.kill()
            throw error
        }
    }

    static func auditEnvironment(
        _ database: TestDatabaseInstance, roles: [String: String], rpc: String, legalRPC: String, legalEvents: String, key: String,
        writers: Int
    ) -> [String: String] {
        var environment = ServiceEnvironment.audit(
            databaseURL: database.url, rpc: rpc, legalRPC: legalRPC, legalEvents: legalEvents, signingKey: key)
        environment.merge(roles) { _, role in role }
        environment["AUDIT_WRITERS"] = String(writers)
        // No Accounts service here: point its consumer at endpoints nobody binds.
        environment["ACCOUNTS_RPC_ENDPOINTS"] = ipcEndpoint()
        environment["ACCOUNTS_EVENTS_ENDPOINTS"] = ipcEndpoint()
        return environment
    }

    /// Publishes a version through Legal (as an operator).
    @discardableResult
    func publish(
        _ type: LegalDocumentType, _ version: String, material: Bool, effectiveAt: Date? = nil,
        content: String? = nil
    ) async throws -> LegalVersionSummary {
        try await legalClient.call(
            LegalPublish.self,
            .init(
                type: type, version: version, content: content ?? "# \(type.rawValue) \(version)\n\n## 1. Text\n\nVersion \(version).\n",
                effectiveAt: effectiveAt, material: material),
            principal: Self.operatorPrincipal)
    }

    func record(
        _ user: UUID, _ type: LegalDocumentType, _ version: String, _ action: AcceptanceAction = .accept,
        key: String = UUID().uuidString, ip: String? = "203.0.113.7", agent: String? = "RecruitingCompass/1.0 iOS"
    )
        async throws -> ConsentReceipt
    {
        try await auditClient.call(
            AuditRecord.self, .init(userId: user, documentType: type, version: version, action: action, clientIP: ip, userAgent: agent),
            principal: Self.operatorPrincipal, idempotencyKey: key, timeout: .seconds(30))
    }

    func status(_ user: UUID, _ type: LegalDocumentType) async throws -> AcceptanceStatus {
        let reply = try await auditClient.call(AuditStatus.self, .init(userId: user), principal: Self.operatorPrincipal)
        return reply.documents.first { $0.documentType == type }!
    }

    func verify() async throws -> AuditVerify.Reply {
        // Walks every chain: under a second for ten thousand records on its own, and several on a
        // 2-core machine running every suite at once. A generous bound, so only a hang fails it.
        try await auditClient.call(AuditVerify.self, Empty(), principal: Self.operatorPrincipal, timeout: .seconds(120))
    }
}
