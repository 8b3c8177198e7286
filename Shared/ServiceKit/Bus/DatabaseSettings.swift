import Postgres

/// How a service reaches its PostgreSQL database.
public struct DatabaseSettings: Sendable {
    /// The role the service serves requests as (see ``ServiceRoles``).
    public var url: Secret<String>
    /// The schema owner's URL for migrations; empty in single-URL development mode, where
    /// ``url`` migrates too.
    public var migrationURL: Secret<String>
    /// Apply the migrations and exit, without serving: a deploy step or init container that
    /// holds the owner's credentials, so the serving process does not.
    public var migrateOnly: Bool
    public var poolSize: Int
    public var checkoutTimeout: Duration
    /// How long start-up waits for the database (containers start together) before giving up.
    public var startupTimeout: Duration
    /// What one session may wait for: server-side timeouts sent as connection options (so they
    /// cost nothing per query; zero turns one off), and TCP keepalives and `tcp_user_timeout`, so
    /// a connection to a primary that vanished (no FIN, no RST) is found dead in seconds rather
    /// than the kernel's two hours.
    public var sessionLimits: PostgresSessionLimits

    public init(environment env: EnvironmentReader) throws {
        url = env.secret(
            "DATABASE_URL", default: "",
            "PostgreSQL connection URL or key=value string for this service's schema (required; `deploy/run` starts a local one).")
        migrationURL = env.secret(
            "DATABASE_MIGRATION_URL", default: "",
            "PostgreSQL URL of the schema's owner role, which applies the migrations at start and then grants `DATABASE_URL`'s role the rows of this schema only (`compass db roles` creates both roles). Empty: `DATABASE_URL` migrates too (development only: its role then owns the schema). With it set, `DATABASE_URL`'s role must be neither superuser nor CREATEROLE nor CREATEDB, or the service refuses to start."
        )
        migrateOnly = try env.bool(
            "DATABASE_MIGRATE_ONLY", default: false,
            "Apply the migrations (as `DATABASE_MIGRATION_URL`'s role if set) and exit 0 without serving: a deploy step or init container, so the serving process needs only `DATABASE_URL`. A serving process whose role cannot migrate starts only when nothing is pending."
        )
        poolSize = try env.int("DATABASE_POOL_SIZE", default: 8, in: 1...500, "Connections this service keeps at most.")
        checkoutTimeout = try env.duration(
            "DATABASE_CHECKOUT_TIMEOUT", default: PostgresPool.defaultCheckoutTimeout,
            "How long a request waits for a free connection before failing `unavailable`.")
        startupTimeout = try env.duration("DATABASE_STARTUP_TIMEOUT", default: .seconds(60), "How long start-up retries reaching the database.")
        let statementTimeout = try env.duration(
            "DATABASE_STATEMENT_TIMEOUT", default: .seconds(15),
            "PostgreSQL `statement_timeout` of this service's sessions: a statement running longer is cancelled and the request answered `unavailable` (HTTP 503 with Retry-After). 0 turns it off. Migrations run without it."
        )
        let lockTimeout = try env.duration(
            "DATABASE_LOCK_TIMEOUT", default: .milliseconds(750),
            "PostgreSQL `lock_timeout`: how long a statement waits for a lock held by someone else (an operator's psql, a migration) before giving up with `unavailable` (HTTP 503 with Retry-After), so its connection goes back to the pool instead of waiting with it. Keep it under the bus clients' 1 s attempt timeout: a call waiting longer is sent again, and where it reaches another instance it queues a second waiter (the instance already running it joins the retry to that run); a refused retryable call is retried by its client within its deadline. 0 turns it off."
        )
        let idleInTransactionTimeout = try env.duration(
            "DATABASE_IDLE_IN_TRANSACTION_TIMEOUT", default: .seconds(30),
            "PostgreSQL `idle_in_transaction_session_timeout`: a session idle inside a transaction that long is ended by the server, releasing its locks. 0 turns it off."
        )
        let keepalivesIdle = try env.duration(
            "DATABASE_KEEPALIVES_IDLE", default: .seconds(10),
            "Idle time before TCP keepalive probes start on a database connection (libpq `keepalives_idle`; TCP connections only).")
        let keepalivesInterval = try env.duration(
            "DATABASE_KEEPALIVES_INTERVAL", default: .seconds(5), "Time between unanswered keepalive probes (libpq `keepalives_interval`).")
        let keepalivesCount = try env.int(
            "DATABASE_KEEPALIVES_COUNT", default: 3, in: 1...100,
            "Unanswered keepalive probes before the connection is declared dead (libpq `keepalives_count`).")
        let tcpUserTimeout = try env.duration(
            "DATABASE_TCP_USER_TIMEOUT", default: .seconds(10),
            "How long sent data may stay unacknowledged before the connection is declared dead (libpq `tcp_user_timeout`): a request to a database host that vanished fails then instead of hanging. 0: the kernel's default."
        )
        sessionLimits = PostgresSessionLimits(
            statementTimeout: statementTimeout, lockTimeout: lockTimeout, idleInTransactionTimeout: idleInTransactionTimeout,
            keepalivesIdle: keepalivesIdle, keepalivesInterval: keepalivesInterval, keepalivesCount: keepalivesCount,
            tcpUserTimeout: tcpUserTimeout)
    }

    public func configuration(applicationName: String) throws -> PostgresConfiguration {
        guard !url.revealed.isEmpty else {
            throw ConfigurationError.missing(
                "DATABASE_URL", expected: "a PostgreSQL URL (deploy/run and deploy/test start a local cluster and set it)")
        }
        var configuration: PostgresConfiguration
        do { configuration = try PostgresConfiguration(url.revealed, applicationName: applicationName) } catch {
            // Never echo the URL: it may hold a password.
            throw ConfigurationError(variable: "DATABASE_URL", value: nil, expected: "a valid PostgreSQL URL or key=value string")
        }
        configuration.applySessionLimits(sessionLimits)
        return configuration
    }

    /// The owner's connection for migrations, or nil in single-URL mode. Session limits are not
    /// applied: migrations run without them.
    public func migrationConfiguration(applicationName: String) throws -> PostgresConfiguration? {
        guard !migrationURL.revealed.isEmpty else { return nil }
        do { return try PostgresConfiguration(migrationURL.revealed, applicationName: applicationName + "-migrations") } catch {
            throw ConfigurationError(variable: "DATABASE_MIGRATION_URL", value: nil, expected: "a valid PostgreSQL URL or key=value string")
        }
    }
}

/// The settings every bus service reads, plus the service's own.
public struct BusServiceSettings<Service: ServiceDescription, Extra: EnvironmentSettings>: EnvironmentSettings {
    public let bus: BusSettings
    public let database: DatabaseSettings
    public let extra: Extra

    public init(environment: EnvironmentReader) throws {
        bus = try BusSettings(defaultRPCBind: Service.defaultRPCBind, defaultEventsBind: Service.defaultEventsBind, environment: environment)
        database = try DatabaseSettings(environment: environment)
        extra = try Extra(environment: environment)
    }
}
