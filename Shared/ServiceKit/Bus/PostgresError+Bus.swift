import Bus
import Postgres

/// Database failures as callers should see them: the database being unreachable, busy or in a
/// retryable conflict is `unavailable` (try again); a constraint the request broke is
/// `conflict` or `invalid_argument`; anything else is `internal`, with details only in the log.
extension PostgresError: BusErrorConvertible {
    public var busError: BusError {
        if isConnectionFailure || kind == .checkoutTimeout || kind == .closed {
            return BusError(.unavailable, "the database is unavailable; try again")
        }
        if isSerializationFailure { return BusError(.unavailable, "a concurrent change conflicted; try again") }
        if isUniqueViolation { return BusError(.conflict, "already exists") }
        if let state = sqlState, state.hasPrefix("22") || state.hasPrefix("23") {
            return BusError(.invalidArgument, "the request breaks a data rule")
        }
        return BusError(.internal, "internal database error")
    }
}
