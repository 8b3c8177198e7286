/// An error type that knows which bus error it is, so a handler can let it propagate and the
/// caller still gets the right code (a lost database connection is `unavailable`, not `internal`).
/// Errors that are neither this nor ``BusError`` reach callers as `internal`, details only in the log.
public protocol BusErrorConvertible: Error {
    var busError: BusError { get }
}

extension BusError {
    /// `error` as a caller may see it: a ``BusError`` as it is, a ``BusErrorConvertible`` as the bus
    /// error it names, anything else as `internal` with `internalMessage` (say what failed, never
    /// the error's own text: it may hold internals; log that).
    public init(converting error: any Error, internalMessage: String) {
        switch error {
        case let error as BusError: self = error
        case let error as any BusErrorConvertible: self = error.busError
        default: self = BusError(.internal, internalMessage)
        }
    }
}
