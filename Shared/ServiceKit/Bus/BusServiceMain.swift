import Bus
import Foundation
import Logging
import Postgres
import ServiceLifecycle

/// The whole life of a bus service in one call from its `main`:
///
/// ```swift
/// @main struct LegalMain {
///     static func main() async {
///         await BusServiceMain.run(LegalService.self) { context in
///             LegalHandlers(store: LegalStore(pool: context.pool), outbox: context.outbox).register(on: context.server)
///         }
///     }
/// }
/// ```
///
/// Start-up: read the environment, connect to PostgreSQL (retrying while it comes up), apply
/// ServiceKit's and the service's migrations (as the schema's owner when one is configured:
/// ``ServiceMigration``), bind the event publisher, let `configure` register
/// handlers and consumers, then bind the RPC server last, so no request arrives before every
/// handler is in place. Shutdown runs the other way: the RPC server stops taking requests and lets
/// running ones reply, then consumers, the relay and the publisher stop, and the pool closes.
public enum BusServiceMain {
    public static func run<Service: ServiceDescription>(
        _ service: Service.Type, configure: @Sendable (BusServiceContext) async throws -> Void
    ) async -> Never {
        await run(service, settings: NoSettings.self) { context, _ in try await configure(context) }
    }

    /// The same, for a service with settings of its own.
    public static func run<Service: ServiceDescription, Extra: EnvironmentSettings>(
        _ service: Service.Type, settings: Extra.Type,
        configure: @Sendable (BusServiceContext, Extra) async throws -> Void
    ) async -> Never {
        await ServiceMain.run(
            name: Service.name, defaultHealthPort: Service.defaultHealthPort,
            settings: BusServiceSettings<Service, Extra>.self
        ) { runtime, settings in
            let logger = runtime.logger
            let pool = PostgresPool(
                configuration: try settings.database.configuration(applicationName: Service.name),
                maxConnections: settings.database.poolSize, checkoutTimeout: settings.database.checkoutTimeout, logger: logger)
            // Added before everything that uses the pool, so it closes after they have all stopped.
            runtime.addService(CloseOnShutdown(name: "postgres pool") { await pool.close() })
            try await ServiceMigration.run(Service.self, database: settings.database, pool: pool, logger: logger)
            if settings.database.migrateOnly {
                logger.info("migrations applied; DATABASE_MIGRATE_ONLY is set: exiting")
                await pool.close()
                exit(0)
            }
            runtime.addReadinessCheck("database") {
                _ = try await pool.withConnection { db in try db.query("SELECT 1") }
            }

            // Before the first socket opens: every socket of the process follows the setting.
            BusEventLoopMode.use(settings.bus.eventLoop)
            let security = settings.bus.serverSecurity
            let publisher = try await EventPublisher.bind(name: Service.name, endpoints: settings.bus.eventsBind, security: security, logger: logger)
            runtime.addService(CloseOnShutdown(name: "event publisher") { await publisher.close() })
            let outbox = Outbox(schema: Service.name)
            runtime.addService(OutboxRelay(outbox: outbox, pool: pool, publisher: publisher, logger: logger))

            let server = RPCServer(
                name: Service.name, endpoints: settings.bus.rpcBind, security: security, options: settings.bus.serverOptions, logger: logger)
            EventsSinceHandler.register(service: Service.name, outbox: outbox, pool: pool, on: server)
            let context = BusServiceContext(
                name: Service.name, runtime: runtime, bus: settings.bus, pool: pool, server: server, publisher: publisher, outbox: outbox)
            DeadLettersHandler.register(service: Service.name, pool: pool, consumer: { [weak context] in context?.consumer(of: $0) }, on: server)
            try await configure(context, settings.extra)
            // The clients of other services close after the handlers that use them have stopped.
            runtime.addService(CloseOnShutdown(name: "bus clients") { await context.closeClients() })
            // Added last, so it starts last and is the first to stop.
            runtime.addService(RPCServerService(server))
        }
    }
}
