import Bus
import Postgres

/// Database failures as callers should see them: the database being unreachable, busy, read-only,
/// out of space or in a retryable conflict is `unavailable` (try again); a constraint the request broke is
/// `conflict` or `invalid_argument`; anything else is `internal`, with details only in the log.
extension PostgresError: BusErrorConvertible {
    public var busError: BusError {
        if isConnectionFailure || kind == .checkoutTimeout || kind == .closed {
            return BusError(.unavailable, "the database is unavailable; try again")
        }
        if isSerializationFailure { return BusError(.unavailable, "a concurrent change conflicted; try again") }
        // 55P03 lock_not_available (`lock_timeout`: someone else holds a lock this needs) and
        // 57014 query_canceled (`statement_timeout`): the database is busy, not the request wrong.
        // The connection is rolled back and reused; the caller may retry shortly.
        if sqlState == "55P03" {
            return BusError(.unavailable, "the data is locked by another operation; try again shortly", details: ["retryAfterSeconds": "2"])
        }
        if sqlState == "57014" {
            return BusError(.unavailable, "the database took too long to answer; try again shortly", details: ["retryAfterSeconds": "2"])
        }
        // 25006: the database (or this session) is read-only, as on a standby after a fail-over;
        // class 53: out of disk, memory or connections. Both pass: the caller should retry later.
        if sqlState == "25006" { return BusError(.unavailable, "the database is read-only; writes are refused for now, try again later") }
        if let state = sqlState, state.hasPrefix("53") {
            return BusError(.unavailable, "the database is out of resources (disk, memory or connections); try again later")
        }
        if isUniqueViolation { return BusError(.conflict, "already exists") }
        if let state = sqlState, state.hasPrefix("22") || state.hasPrefix("23") {
            return BusError(.invalidArgument, "the request breaks a data rule")
        }
        return BusError(.internal, "internal database error")
    }
}
