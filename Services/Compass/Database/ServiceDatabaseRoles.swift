import Foundation
import Logging
import Postgres
import ServiceKit

/// The database roles of every service of a deployment, made on one admin connection: per
/// service an owner that migrates (`<prefix>_<service>_owner`) and a runtime role
/// (`<prefix>_<service>`) that reads and writes that service's rows only (``ServiceRoles``). The
/// prefix is the database's name, so two databases on one cluster (a test's, a second stack's)
/// never share roles.
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
        let connection = try await PostgresConnection.connect(configuration: configuration, logger: logger)
        do {
            let roles = try await connection.run { connection in
                let database = try connection.query("SELECT current_database()")[0].decode(String.self, column: 0)
                var roles: [ServiceName: ServiceRoles] = [:]
                for service in services {
                    guard let password = passwords[service] else { throw CLIError("no passwords for \(service.rawValue)") }
                    let serviceRoles = try ServiceRoles(schema: service.rawValue, prefix: database)
                    try serviceRoles.provision(
                        ownerPassword: password.owner, runtimePassword: password.runtime, createsInPublic: service.createsInPublicSchema,
                        on: connection)
                    if service.storesLargeObjects { try connection.executeScript(Self.largeObjectTransfer(to: serviceRoles.runtime)) }
                    roles[service] = serviceRoles
                }
                return roles
            }
            await connection.close()
            return roles
        } catch {
            await connection.close()
            throw error
        }
    }
}

extension ServiceDatabaseRoles {
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

extension ServiceName {
    /// Documents keeps its bytes as large objects, which belong to the role that made them.
    var storesLargeObjects: Bool { self == .documents }
    /// Accounts' migrations make the operator's read-only view `public.users`.
    var createsInPublicSchema: Bool { self == .accounts }
    /// Where `compass db roles` reads this service's runtime role's password.
    var databasePasswordVariable: String { "\(variablePrefix)_DATABASE_PASSWORD" }
    /// Where `compass db roles` reads this service's owner role's password.
    var databaseOwnerPasswordVariable: String { "\(variablePrefix)_DATABASE_OWNER_PASSWORD" }
}
