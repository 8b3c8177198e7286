import ArgumentParser
import Foundation
import Logging
import Postgres
import ServiceKit

/// `compass db roles`: a deployment's per-service database roles, made or brought up to date
/// before the services start (compose's `db-roles` service, the Kubernetes `db-roles` Job).
struct DatabaseCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "db", abstract: "Set up the database of a deployment.", subcommands: [Roles.self])

    struct Roles: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Create or update each service's owner and runtime roles and give each owner its schema.",
            discussion: """
                Reads DATABASE_ADMIN_URL (a role that may create roles, e.g. the postgres image's first user) and,
                for each service, <SERVICE>_DATABASE_OWNER_PASSWORD and <SERVICE>_DATABASE_PASSWORD (at least 16
                characters of A-Z a-z 0-9 . _ ~ + / = -; `compass keys generate` makes them). In a database named D,
                service S gets the role D_S_owner, which owns schema S and runs its migrations
                (DATABASE_MIGRATION_URL), and D_S, which the service serves as (DATABASE_URL): USAGE on S and the
                rows of its tables, nothing on any other schema; Audit's records, checkpoints, subjects, erasures
                and versions only INSERT and SELECT (erasure goes through audit.erase_subject). CONNECT and
                TEMPORARY on D are revoked from PUBLIC: only these roles (with D's owner and superusers) connect.
                Safe to run again: it resets the passwords and re-applies ownership and grants. Passwords are sent
                hashed (SCRAM-SHA-256), never printed. For up to 60 s it waits out a database that is not reachable
                yet, a transient refusal (deadlock, lock timeout, read-only standby) and a grant racing another
                session's grants on the same schema, and then fails with the last error.
                """)

        @Option(help: "Only these services (comma-separated); all four by default.")
        var services: String?

        /// The variables this command reads, for `compass env` and the configuration reference.
        static func declare(in reader: EnvironmentReader) {
            reader.declare(
                "DATABASE_ADMIN_URL", default: "", secret: true,
                "`compass db roles`: libpq URL of a role that may create roles (e.g. the postgres image's first user).")
            for service in ServiceName.allCases {
                reader.declare(
                    service.databaseOwnerPasswordVariable, default: "", secret: true,
                    "`compass db roles`: password it sets for the \(service.rawValue) schema's owner role (at least 16 characters; `compass keys generate`)."
                )
                reader.declare(
                    service.databasePasswordVariable, default: "", secret: true,
                    "`compass db roles`: password it sets for the \(service.rawValue) service's runtime role (at least 16 characters).")
            }
        }

        func run() async throws {
            let environment = ProcessInfo.processInfo.environment
            let adminURL = try DatabaseURL.required(
                variable: "DATABASE_ADMIN_URL", role: "a role that may create roles (e.g. the postgres superuser)")
            let chosen =
                try services.map { list in
                    try list.split(separator: ",").map { name in
                        guard let service = ServiceName(rawValue: name.trimmingCharacters(in: .whitespaces)) else {
                            throw CLIError("unknown service \(name): expected legal, accounts, documents or audit")
                        }
                        return service
                    }
                } ?? ServiceName.allCases
            var passwords: [ServiceName: ServiceDatabaseRoles.Passwords] = [:]
            for service in chosen {
                guard let owner = environment[service.databaseOwnerPasswordVariable], !owner.isEmpty,
                    let runtime = environment[service.databasePasswordVariable], !runtime.isEmpty
                else {
                    throw CLIError("\(service.databaseOwnerPasswordVariable) and \(service.databasePasswordVariable) must both be set")
                }
                passwords[service] = .init(owner: owner, runtime: runtime)
            }
            var logger = Logger(label: "compass")
            logger.logLevel = .warning
            // The job that gates every service's start: a database still coming up, or a grant
            // racing a starting service's own grants, is waited out rather than failing the deployment.
            let roles = try await DatabaseRetry.run(within: .seconds(60), logger: logger, retrying: DatabaseRetry.oneShot) {
                try await ServiceDatabaseRoles.provision(adminURL: adminURL, services: chosen, passwords: passwords, logger: logger)
            }
            for service in chosen {
                guard let serviceRoles = roles[service] else { continue }
                ConsoleOutput.say(
                    "\(service.rawValue): schema \(serviceRoles.schema) owned by \(serviceRoles.owner) (migrations); \(serviceRoles.runtime) serves it"
                )
            }
        }
    }
}
