import Postgres

/// How a service reaches its PostgreSQL database.
public struct DatabaseSettings: Sendable {
    public var url: Secret<String>
    public var poolSize: Int
    public var checkoutTimeout: Duration
    /// How long start-up waits for the database (containers start together) before giving up.
    public var startupTimeout: Duration

    public init(environment env: EnvironmentReader) throws {
        url = env.secret("DATABASE_URL", default: "", "PostgreSQL connection URL or key=value string for this service's schema (required; `deploy/run` starts a local one).")
        poolSize = try env.int("DATABASE_POOL_SIZE", default: 8, in: 1...500, "Connections this service keeps at most.")
        checkoutTimeout = try env.duration("DATABASE_CHECKOUT_TIMEOUT", default: .seconds(5), "How long a request waits for a free connection before failing `unavailable`.")
        startupTimeout = try env.duration("DATABASE_STARTUP_TIMEOUT", default: .seconds(60), "How long start-up retries reaching the database.")
    }

    public func configuration(applicationName: String) throws -> PostgresConfiguration {
        guard !url.revealed.isEmpty else {
            throw ConfigurationError.missing("DATABASE_URL", expected: "a PostgreSQL URL (deploy/run and deploy/test start a local cluster and set it)")
        }
        do { return try PostgresConfiguration(url.revealed, applicationName: applicationName) } catch {
            // Never echo the URL: it may hold a password.
            throw ConfigurationError(variable: "DATABASE_URL", value: nil, expected: "a valid PostgreSQL URL or key=value string")
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
