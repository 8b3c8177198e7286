/// An error type that knows which bus error it is, so a handler can let it propagate and the
/// caller still gets the right code (a lost database connection is `unavailable`, not `internal`).
/// Errors that are neither this nor ``BusError`` reach callers as `internal`, details only in the log.
public protocol BusErrorConvertible: Error {
    var busError: BusError { get }
}
