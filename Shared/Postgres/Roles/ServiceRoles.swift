import CLibPQ
import Foundation

/// The two database roles of one service: an owner that holds its schema and runs its migrations,
/// and the role the service connects as at run time, which may only read and write the rows of
/// that schema.
///
/// Least privilege for a service that holds minors' data: a flaw in one service (an injected
/// statement, a stolen connection string) reaches that service's rows and nothing else. The
/// runtime role has `USAGE` on its own schema and `SELECT, INSERT, UPDATE, DELETE` on its tables
/// (only `SELECT, INSERT` on its ``appendOnlyTables``), `USAGE, SELECT` on its sequences and
/// `EXECUTE` on its functions; no `CREATE`, no ownership (so no DDL, no `TRUNCATE`, no triggers),
/// nothing on any other schema, and neither superuser nor `CREATEROLE` nor `CREATEDB`. Only the
/// two roles may connect to the database (besides its owner and superusers), and neither may make
/// temporary tables. Large objects belong to whoever creates them, so the runtime role of
/// Documents owns the bytes it stores and no other role can read them.
public struct ServiceRoles: Sendable, Hashable {
    /// The service's schema, e.g. `accounts`.
    public let schema: String
    /// Owns the schema and every object in it; migrations connect as this role.
    public let owner: String
    /// What the service connects as to serve requests.
    public let runtime: String
    /// Tables of the schema whose rows the runtime role may add and read but never change or
    /// delete (Audit's records). What must still change in them goes through a `SECURITY DEFINER`
    /// function of the owner's that changes that and nothing else.
    public let appendOnlyTables: [String]

    /// The roles of `schema` under a deployment's `prefix`: `<prefix>_<schema>` at run time and
    /// `<prefix>_<schema>_owner` for migrations (`compass_accounts`, `compass_accounts_owner`).
    /// Both are checked to be plain identifiers, since DDL cannot take them as parameters.
    public init(schema: String, prefix: String = "compass", appendOnlyTables: [String] = []) throws {
        let runtime = "\(prefix)_\(schema)"
        try self.init(schema: schema, owner: runtime + "_owner", runtime: runtime, appendOnlyTables: appendOnlyTables)
    }

    public init(schema: String, owner: String, runtime: String, appendOnlyTables: [String] = []) throws {
        for name in [schema, owner, runtime] + appendOnlyTables where !Self.isPlainIdentifier(name) {
            throw DatabaseRoleError.invalidName(name)
        }
        guard owner != runtime else { throw DatabaseRoleError.sameRole(owner) }
        self.schema = schema
        self.owner = owner
        self.runtime = runtime
        self.appendOnlyTables = appendOnlyTables
    }

    /// `[a-z_][a-z0-9_]*`, at most 63 bytes: safe to splice into DDL unquoted.
    public static func isPlainIdentifier(_ name: String) -> Bool {
        let scalars = name.unicodeScalars
        guard let first = scalars.first, first == "_" || ("a"..."z").contains(first), scalars.count <= 63 else { return false }
        return scalars.allSatisfy { $0 == "_" || ("a"..."z").contains($0) || ("0"..."9").contains($0) }
    }

    /// The grants the runtime role gets on what the owner made in the schema, now and later.
    /// Run by the owner after its migrations (it owns every object, so it may grant them) and by
    /// ``provision(ownerPassword:runtimePassword:createsInPublic:on:)``. One script, so one
    /// transaction: the append-only tables are never writable in between. Those not made yet
    /// (roles provisioned before the first migration) are skipped; the service applies this again
    /// after migrating.
    public var runtimeGrants: String {
        let appendOnly = appendOnlyTables.map { "'\($0)'" }.joined(separator: ", ")
        return """
            GRANT USAGE ON SCHEMA \(schema) TO \(runtime);
            GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA \(schema) TO \(runtime);
            GRANT USAGE, SELECT ON ALL SEQUENCES IN SCHEMA \(schema) TO \(runtime);
            GRANT EXECUTE ON ALL FUNCTIONS IN SCHEMA \(schema) TO \(runtime);
            ALTER DEFAULT PRIVILEGES FOR ROLE \(owner) IN SCHEMA \(schema)
                GRANT SELECT, INSERT, UPDATE, DELETE ON TABLES TO \(runtime);
            ALTER DEFAULT PRIVILEGES FOR ROLE \(owner) IN SCHEMA \(schema) GRANT USAGE, SELECT ON SEQUENCES TO \(runtime);
            ALTER DEFAULT PRIVILEGES FOR ROLE \(owner) IN SCHEMA \(schema) GRANT EXECUTE ON FUNCTIONS TO \(runtime);
            DO $append_only$
            DECLARE item record;
            BEGIN
                FOR item IN
                    SELECT c.relname FROM pg_class c
                    WHERE c.relnamespace = '\(schema)'::regnamespace AND c.relname = ANY (ARRAY[\(appendOnly)]::name[])
                LOOP
                    EXECUTE format('REVOKE UPDATE, DELETE, TRUNCATE ON %I.%I FROM %I', '\(schema)', item.relname, '\(runtime)');
                END LOOP;
            END
            $append_only$;
            """
    }
}

/// Why roles could not be set up.
public enum DatabaseRoleError: Error, Sendable, Equatable, CustomStringConvertible {
    case invalidName(String)
    case sameRole(String)
    /// Passwords of fewer than 16 characters, or with characters outside `[A-Za-z0-9._~+/=-]`,
    /// are refused: they are secrets an operator generates, not something to remember.
    case weakPassword(role: String)
    case encryptionFailed(role: String, message: String)

    public var description: String {
        switch self {
        case .invalidName(let name): "invalid role or schema name \"\(name)\" (expected [a-z_][a-z0-9_]*, at most 63 bytes)"
        case .sameRole(let name): "the owner and the runtime role must be two roles (both are \(name))"
        case .weakPassword(let role):
            "the password of role \(role) must be at least 16 characters of A-Z a-z 0-9 . _ ~ + / = - (e.g. openssl rand -hex 24)"
        case .encryptionFailed(let role, let message): "could not hash the password of role \(role): \(message)"
        }
    }
}

extension ServiceRoles {
    /// Creates or updates both roles and hands them the schema, on a connection of a role that
    /// may create roles (a superuser, or a `CREATEROLE` role that is a member of neither). Safe to
    /// run again: it sets the passwords, makes the owner own the schema and everything already in
    /// it (a database first run in single-URL mode, with everything owned by the admin), and
    /// applies the grants.
    ///
    /// `CONNECT` and `TEMPORARY` on the database are taken from `PUBLIC`: only the roles provisioned
    /// here connect (with the database's owner and superusers, who keep both), and none makes
    /// temporary tables, which no service uses. Any other role that must connect (a monitoring
    /// agent) needs its own `GRANT CONNECT`.
    ///
    /// Passwords never travel in plain text: each is hashed here with libpq's
    /// `PQencryptPasswordConn` (SCRAM-SHA-256), so the statement a server may log carries only the
    /// verifier, as psql's `\password` does.
    ///
    /// - Parameter createsInPublic: whether the owner's migrations create something in `public`
    ///   (Accounts' read-only operator view `public.users`): the owner then gets `CREATE` there.
    public func provision(
        ownerPassword: String, runtimePassword: String, createsInPublic: Bool = false, on connection: isolated PostgresConnection
    ) throws {
        let ownerVerifier = try connection.passwordVerifier(ownerPassword, role: owner)
        let runtimeVerifier = try connection.passwordVerifier(runtimePassword, role: runtime)
        try connection.transaction { connection in
            for (role, verifier) in [(owner, ownerVerifier), (runtime, runtimeVerifier)] {
                // Attributes spelled out, so a role that existed with more loses them here.
                let attributes = "LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE NOREPLICATION NOBYPASSRLS NOINHERIT"
                let exists = try connection.query("SELECT 1 FROM pg_roles WHERE rolname = $1", role).count > 0
                // A SCRAM verifier is [A-Za-z0-9+/=:$-]: no quote can end the literal.
                try connection.executeScript(
                    "\(exists ? "ALTER" : "CREATE") ROLE \(role) WITH \(attributes) PASSWORD '\(verifier)'")
            }
            let database = try connection.query("SELECT current_database()")[0].decode(String.self, column: 0)
            guard ServiceRoles.isPlainIdentifier(database) else { throw DatabaseRoleError.invalidName(database) }
            try connection.executeScript(
                """
                REVOKE CONNECT, TEMPORARY ON DATABASE \(database) FROM PUBLIC;
                REVOKE TEMPORARY ON DATABASE \(database) FROM \(owner), \(runtime);
                GRANT CONNECT ON DATABASE \(database) TO \(owner), \(runtime);
                REVOKE CREATE ON SCHEMA public FROM PUBLIC;
                CREATE SCHEMA IF NOT EXISTS \(schema) AUTHORIZATION \(owner);
                ALTER SCHEMA \(schema) OWNER TO \(owner);
                REVOKE ALL ON SCHEMA \(schema) FROM PUBLIC;
                """)
            if createsInPublic { try connection.executeScript("GRANT CREATE ON SCHEMA public TO \(owner)") }
            try connection.executeScript(ownershipTransfer)
            try connection.executeScript(runtimeGrants)
        }
    }

    /// Gives the owner every table, sequence, view and function of the schema it does not own yet.
    private var ownershipTransfer: String {
        """
        DO $transfer$
        DECLARE item record;
        BEGIN
            FOR item IN
                SELECT c.relname, CASE c.relkind WHEN 'S' THEN 'SEQUENCE' WHEN 'v' THEN 'VIEW'
                                  WHEN 'm' THEN 'MATERIALIZED VIEW' ELSE 'TABLE' END AS kind
                FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
                WHERE n.nspname = '\(schema)' AND c.relkind IN ('r', 'p', 'v', 'm', 'S')
                  AND c.relowner <> '\(owner)'::regrole
                  AND NOT (c.relkind = 'S' AND EXISTS (SELECT 1 FROM pg_depend d
                           WHERE d.objid = c.oid AND d.deptype IN ('a', 'i')))
            LOOP
                EXECUTE format('ALTER %s %I.%I OWNER TO %I', item.kind, '\(schema)', item.relname, '\(owner)');
            END LOOP;
            FOR item IN
                SELECT p.oid::regprocedure AS signature FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
                WHERE n.nspname = '\(schema)' AND p.proowner <> '\(owner)'::regrole
            LOOP
                EXECUTE format('ALTER ROUTINE %s OWNER TO %I', item.signature, '\(owner)');
            END LOOP;
        END
        $transfer$;
        """
    }

    /// The roles' password rule (see ``DatabaseRoleError/weakPassword(role:)``).
    public static func isAcceptablePassword(_ password: String) -> Bool {
        password.unicodeScalars.count >= 16
            && password.unicodeScalars.allSatisfy { $0.isASCII && (CharacterSet.alphanumerics.contains($0) || "._~+/=-".unicodeScalars.contains($0)) }
    }

    /// A new random password for a role: 48 hex digits (192 bits).
    public static func generatePassword() -> String {
        var generator = SystemRandomNumberGenerator()
        return (0..<24).map { _ in String(format: "%02x", UInt8.random(in: .min ... .max, using: &generator)) }.joined()
    }

    /// `url` (a `postgresql://` URL) with its user and password replaced: the same servers and
    /// database, reached as `role`. Nil when `url` is not a URL. libpq's multi-host form
    /// (`postgresql://u@h1:p1,h2:p2/db?target_session_attrs=read-write`, what a failover pair is
    /// given) is no RFC 3986 URL, which `URLComponents` rejects, so only the user information
    /// before the hosts is rewritten; the rest is kept as it is.
    public static func url(_ url: String, user role: String, password: String) -> String? {
        guard let separator = url.range(of: "://"), url[..<separator.lowerBound].hasPrefix("postgres"),
            let user = role.addingPercentEncoding(withAllowedCharacters: .urlUserAllowed),
            let password = password.addingPercentEncoding(withAllowedCharacters: .urlPasswordAllowed)
        else { return nil }
        let rest = url[separator.upperBound...]
        let authorityEnd = rest.firstIndex { $0 == "/" || $0 == "?" } ?? rest.endIndex
        let authority = rest[..<authorityEnd]
        // No host is libpq's default (the local socket): `postgresql://role:pw@/db`.
        let hosts = authority.lastIndex(of: "@").map { authority[authority.index(after: $0)...] } ?? authority
        return url[..<separator.upperBound] + "\(user):\(password)@" + hosts + rest[authorityEnd...]
    }
}

extension PostgresConnection {
    /// The SCRAM-SHA-256 verifier of `password` for `role`, computed by libpq on this side.
    func passwordVerifier(_ password: String, role: String) throws -> String {
        guard ServiceRoles.isAcceptablePassword(password) else { throw DatabaseRoleError.weakPassword(role: role) }
        let raw = try connection(for: "PQencryptPasswordConn")
        guard let hashed = PQencryptPasswordConn(raw, password, role, "scram-sha-256") else {
            throw DatabaseRoleError.encryptionFailed(role: role, message: PostgresError.lastMessage(raw))
        }
        defer { PQfreemem(hashed) }
        return String(cString: hashed)
    }
}
