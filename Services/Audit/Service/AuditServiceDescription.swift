import Foundation
import Postgres
import ServiceKit

/// The Audit service: schema `audit`, default addresses from ``ServiceName/audit``.
public enum AuditServiceDescription: ServiceDescription {
    public static let name = "audit"
    public static var defaultRPCBind: String { defaults(.audit).rpc }
    public static var defaultEventsBind: String { defaults(.audit).events }
    public static var defaultHealthPort: Int { defaults(.audit).health }

    public static func migrations() throws -> [Migration] {
        guard let directory = Bundle.module.url(forResource: "Migrations", withExtension: nil) else {
            throw ConfigurationError(variable: "Migrations", value: nil, expected: "the Audit service's migration files next to its executable")
        }
        return try Migration.load(directory: directory)
    }
}
