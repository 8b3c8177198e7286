import Foundation
import Logging
import Postgres
import ServiceKit

/// The database roles of every service of a deployment, made on one admin connection: per
/// service an owner that migrates (`<prefix>_<service>_owner`) and a runtime role
/// (`<prefix>_<service>`) that reads and writes that service's rows only. The prefix is the
/// database's name, so two databases on one cluster (a test's, a second stack's) never share
/// roles. What each role may do is ServiceKit's (``ServiceName/provisionDatabaseRoles(ownerPassword:runtimePassword:on:)``).
struct ServiceDatabaseRoles {
    /// One service's two passwords.
    struct Passwords: Sendable {
        let owner: String
        let runtime: String
    }

    /// Creates or updates the roles of `services` on the database `adminURL` names and returns
    /// them. The admin must be allowed to create roles (a superuser, as the local cluster's and
    /// the postgres image's first role are).
    static func provision(
        adminURL: String, services: [ServiceName], passwords: [ServiceName: Passwords], logger: Logger
    ) async throws -> [ServiceName: ServiceRoles] {
        let configuration: PostgresConfiguration
        do { configuration = try PostgresConfiguration(adminURL, applicationName: "compass-db-roles") } catch {
            throw CLIError("the admin database URL is not a valid PostgreSQL URL")  // never echoed: it may hold a password
        }
        return try await PostgresConnection.using(configuration: configuration, logger: logger) { connection in
            try await connection.run { connection in
                var roles: [ServiceName: ServiceRoles] = [:]
                for service in services {
                    guard let password = passwords[service] else { throw CLIError("no passwords for \(service.rawValue)") }
                    roles[service] = try service.provisionDatabaseRoles(
                        ownerPassword: password.owner, runtimePassword: password.runtime, on: connection)
                }
                return roles
            }
        }
    }
}

extension ServiceName {
    /// Where `compass db roles` reads this service's runtime role's password.
    var databasePasswordVariable: String { "\(variablePrefix)_DATABASE_PASSWORD" }
    /// Where `compass db roles` reads this service's owner role's password.
    var databaseOwnerPasswordVariable: String { "\(variablePrefix)_DATABASE_OWNER_PASSWORD" }
}
