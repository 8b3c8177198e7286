import Postgres

/// How a statement run as a pool's role ended, for the least-privilege tests: refused for want of
/// privilege (SQLSTATE 42501) as they expect, allowed, or failed some other way (described).
public enum PrivilegeCheck: Equatable, Sendable {
    case refused
    case allowed
    case failed(String)

    /// Runs `sql` as `pool`'s role and says which it was.
    public static func run(_ pool: PostgresPool, _ sql: String) async -> PrivilegeCheck {
        do {
            try await pool.withConnection { db in try db.executeScript(sql) }
            return .allowed
        } catch let error as PostgresError where error.sqlState == "42501" {
            return .refused
        } catch {
            return .failed("\(error)")
        }
    }
}
