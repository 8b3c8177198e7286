import Postgres

/// What each service's database roles may do, in one place: `compass db roles` and `compass up`
/// provision them from here, a service applies the same grants after its migrations
/// (``ServiceMigration``), and the tests' databases are provisioned through the same call.
/// The mechanism (the two roles, the grants, `CONNECT` and `TEMPORARY` taken from `PUBLIC`) is
/// ``ServiceRoles``; what differs between services is below.
extension ServiceName {
    /// Tables whose rows the runtime role may add and read but never change or delete.
    ///
    /// Audit's are the evidence: the records and their signed checkpoints, the subjects that link
    /// them to users, the erasures that prove a link was removed, and the published versions whose
    /// digests records copy. Erasure, the one change they allow, is `audit.erase_subject(uuid)`
    /// (migration 0120), a `SECURITY DEFINER` function of the schema's owner that deletes the
    /// subject, clears the records' IP, user agent and idempotency hash, and logs the erasure.
    /// `audit.chains` stays writable: each batch moves its chain's head.
    public var appendOnlyTables: [String] {
        switch self {
        case .audit: ["legal_versions", "subjects", "erasures", "records", "checkpoints"]
        case .legal, .accounts, .documents: []
        }
    }

    /// Documents keeps its bytes as large objects, which belong to the role that made them.
    public var storesLargeObjects: Bool { self == .documents }

    /// Accounts' migrations make the operator's read-only view `public.users`.
    public var createsInPublicSchema: Bool { self == .accounts }

    /// This service's roles under a deployment's `prefix` (the database's name).
    public func databaseRoles(prefix: String) throws -> ServiceRoles {
        try ServiceRoles(schema: rawValue, prefix: prefix, appendOnlyTables: appendOnlyTables)
    }

    /// This service's roles with the names they already have (a service at start).
    public func databaseRoles(owner: String, runtime: String) throws -> ServiceRoles {
        try ServiceRoles(schema: rawValue, owner: owner, runtime: runtime, appendOnlyTables: appendOnlyTables)
    }

    /// Creates or updates this service's two roles in the database `connection` is on (a role
    /// that may create roles), prefixed with the database's name so that two databases on one
    /// cluster never share roles, and hands them the schema
    /// (``ServiceRoles/provision(ownerPassword:runtimePassword:createsInPublic:on:)``).
    public func provisionDatabaseRoles(
        ownerPassword: String, runtimePassword: String, on connection: isolated PostgresConnection
    ) throws -> ServiceRoles {
        let database = try connection.query("SELECT current_database()")[0].decode(String.self, column: 0)
        let roles = try databaseRoles(prefix: database)
        try roles.provision(
            ownerPassword: ownerPassword, runtimePassword: runtimePassword, createsInPublic: createsInPublicSchema, on: connection)
        if storesLargeObjects { try connection.executeScript(Self.largeObjectTransfer(to: roles.runtime)) }
        return roles
    }

    /// Gives Documents' runtime role the large objects made before it existed (a deployment first
    /// run with one URL, whose bytes the admin owns): only their owner may read or unlink them.
    /// Only Documents stores large objects in a deployment's database. `role` is a checked plain
    /// identifier (``ServiceRoles``).
    static func largeObjectTransfer(to role: String) -> String {
        """
        DO $transfer$
        DECLARE item record;
        BEGIN
            FOR item IN SELECT oid FROM pg_largeobject_metadata WHERE lomowner <> '\(role)'::regrole LOOP
                EXECUTE format('ALTER LARGE OBJECT %s OWNER TO %I', item.oid, '\(role)');
            END LOOP;
        END
        $transfer$;
        """
    }
}
