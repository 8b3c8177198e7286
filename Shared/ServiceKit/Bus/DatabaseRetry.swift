import Logging
import Postgres
import Retry

/// Runs a start-up step on the database again while PostgreSQL refuses it for a reason of the
/// moment, for a bounded time: containers start together, so the database may still be coming up
/// (or failing over), and the role and grant steps may race another session's grants on the same
/// schema (``PostgresError/isConcurrentCatalogUpdate``). Any other error, or the last refusal once
/// `timeout` has run out, is thrown.
///
/// For steps that are safe to run twice (a migration under its lock, a transaction of grants);
/// never for a request, whose retries are its client's (DESIGN §6).
public enum DatabaseRetry {
    /// The retries of a service's own start-up: the database unreachable, or a grant racing another.
    public static let startup: @Sendable (PostgresError) -> Bool = { $0.isConnectionFailure || $0.isConcurrentCatalogUpdate }
    /// The retries of an operator's one-shot step (`compass db roles`): everything transient too
    /// (a deadlock, a lock or statement timeout, a standby that is read-only until promoted).
    public static let oneShot: @Sendable (PostgresError) -> Bool = { $0.isTransient || $0.isConcurrentCatalogUpdate }

    public static func run<T: Sendable>(
        within timeout: Duration, logger: Logger, retrying shouldRetry: @Sendable (PostgresError) -> Bool = startup,
        _ body: () async throws -> T
    ) async throws -> T {
        let end = ContinuousClock.now + timeout
        let backoff = Backoff(first: .milliseconds(200), maximum: .seconds(5))
        var failures = 0
        while true {
            do {
                return try await body()
            } catch let error as PostgresError where shouldRetry(error) {
                failures += 1
                let delay = backoff.delay(after: failures)
                guard ContinuousClock.now + delay < end else { throw error }
                logger.warning("database refused for now, retrying", metadata: ["error": "\(error)", "in": "\(delay)"])
                try await Task.sleep(for: delay)
            }
        }
    }
}
