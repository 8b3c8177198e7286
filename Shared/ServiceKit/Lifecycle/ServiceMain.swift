import Foundation
import Logging

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The whole life of a service executable in one call from its `main`:
///
/// ```swift
/// @main struct LegalMain {
///     static func main() async {
///         await ServiceMain.run(name: "legal", defaultHealthPort: 5751, settings: LegalSettings.self) { runtime, settings in
///             let database = try await Database.connect(settings.databaseURL, logger: runtime.logger)
///             runtime.addReadinessCheck("database") { try await database.ping() }
///             runtime.addService(RPCServer(...))
///         }
///     }
/// }
/// ```
///
/// It reads ``CommonConfiguration`` and the service's ``EnvironmentSettings``, bootstraps logging
/// and metrics, makes the runtime (its health server binds once it runs), lets `configure` register readiness checks and services,
/// runs them until SIGTERM or SIGINT, shuts down gracefully and exits 0. A bad configuration, a port
/// in use or an error thrown by `configure` or a service exits 1 with the reason on standard error
/// or in the log. `--help-env` prints the table of environment variables and exits 0.
public enum ServiceMain {
    public static func run<Settings: EnvironmentSettings>(
        name: String, defaultVersion: String = "dev", defaultHealthPort: Int, settings: Settings.Type,
        arguments: [String] = CommandLine.arguments,
        environment: [String: String] = ProcessInfo.processInfo.environment,
        configure: (ServiceRuntime, Settings) async throws -> Void
    ) async -> Never {
        if arguments.contains("--help-env") {
            print(environmentReference(settings: settings, defaultVersion: defaultVersion, defaultHealthPort: defaultHealthPort), terminator: "")
            exit(0)
        }
        let reader = EnvironmentReader(environment)
        let common: CommonConfiguration
        do {
            common = try CommonConfiguration(environment: reader, defaultVersion: defaultVersion, defaultHealthPort: defaultHealthPort)
        } catch {
            fail("\(name): configuration error: \(error)")
        }
        LoggingBootstrap.bootstrap(service: name, format: common.logFormat, level: common.logLevel)
        var logger = Logger(label: name)
        logger[metadataKey: "version"] = "\(common.version)"
        do {
            let settings = try Settings(environment: reader)
            let runtime = ServiceRuntime(name: name, configuration: common, logger: logger, metrics: MetricsBootstrap.bootstrap())
            try await configure(runtime, settings)
            logger.info("starting", metadata: ["health_port": "\(common.health.port)"])
            try await runtime.run()
            logger.info("stopped")
            exit(0)
        } catch {
            logger.critical("exiting on error", error: error)
            exit(1)
        }
    }

    /// ``run(name:defaultVersion:defaultHealthPort:settings:arguments:environment:configure:)`` for a
    /// service with no settings of its own.
    public static func run(
        name: String, defaultVersion: String = "dev", defaultHealthPort: Int,
        arguments: [String] = CommandLine.arguments,
        environment: [String: String] = ProcessInfo.processInfo.environment,
        configure: (ServiceRuntime) async throws -> Void
    ) async -> Never {
        await run(
            name: name, defaultVersion: defaultVersion, defaultHealthPort: defaultHealthPort, settings: NoSettings.self,
            arguments: arguments, environment: environment
        ) { runtime, _ in try await configure(runtime) }
    }

    /// The Markdown table of every variable the service reads, common ones first, with their defaults.
    public static func environmentReference<Settings: EnvironmentSettings>(
        settings: Settings.Type, defaultVersion: String = "dev", defaultHealthPort: Int
    ) -> String {
        let reader = EnvironmentReader([:])
        _ = try? CommonConfiguration(environment: reader, defaultVersion: defaultVersion, defaultHealthPort: defaultHealthPort)
        _ = try? Settings(environment: reader)
        return reader.variables.markdownTable()
    }

    private static func fail(_ message: String) -> Never {
        FileHandle.standardError.write(Data((message + "\n").utf8))
        exit(1)
    }
}
