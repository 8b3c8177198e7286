import Foundation
import TestSupport
import Testing

/// The commands that connect to PostgreSQL themselves refuse, in one wording, when their URL is
/// missing or empty (`DATABASE_URL=` in a `.env` file), before connecting to anything.
@Suite struct CompassDatabaseURLTests {
    @Test(arguments: [
        (["load", "baseline"], "DATABASE_URL", "set DATABASE_URL: the URL of the database pgbench writes to"),
        (["db", "roles"], "DATABASE_ADMIN_URL", "set DATABASE_ADMIN_URL: the URL of a role that may create roles"),
    ])
    func aMissingURLIsRefusedSayingWhoseItMustBe(arguments: [String], variable: String, refusal: String) async throws {
        for value in [nil, ""] as [String?] {
            var environment = ProcessInfo.processInfo.environment
            environment[variable] = value
            let (status, output) = try await CompassUpTests().run("compass", arguments, environment)
            #expect(status != 0, "\(arguments) with \(variable)=\(value ?? "(unset)"): \(output)")
            #expect(output.contains(refusal), "\(arguments) with \(variable)=\(value ?? "(unset)"): \(output)")
        }
    }
}
