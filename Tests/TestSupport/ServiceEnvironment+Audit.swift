extension ServiceEnvironment {
    /// The Audit executable's environment: the common part, the Legal service it follows, its
    /// signing key, and checkpoints far apart (tests and benchmarks write them at shutdown).
    public static func audit(
        databaseURL: String, rpc: String, legalRPC: String, legalEvents: String, signingKey: String,
        logLevel: String = "warning"
    ) -> [String: String] {
        var environment = make(databaseURL: databaseURL, rpc: rpc, logLevel: logLevel)
        environment["LEGAL_RPC_ENDPOINTS"] = legalRPC
        environment["LEGAL_EVENTS_ENDPOINTS"] = legalEvents
        environment["AUDIT_SIGNING_KEY"] = signingKey
        environment["AUDIT_CHECKPOINT_INTERVAL"] = "1h"
        return environment
    }

    /// The same with Audit's roles of its own in `database`.
    public static func audit(
        database: TestDatabaseInstance, rpc: String, legalRPC: String, legalEvents: String, signingKey: String,
        logLevel: String = "warning"
    ) async throws -> [String: String] {
        var environment = audit(
            databaseURL: database.url, rpc: rpc, legalRPC: legalRPC, legalEvents: legalEvents, signingKey: signingKey, logLevel: logLevel)
        environment.merge(try await database.serviceEnvironment("audit")) { _, role in role }
        return environment
    }
}
