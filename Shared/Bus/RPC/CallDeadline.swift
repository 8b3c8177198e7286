/// The deadline of the request a handler is serving, so the calls it makes to other services end
/// in time for its own reply (deadline propagation, as gRPC does it). ``RPCServer`` sets it around
/// each handler; ``RPCClient`` caps every call made under it.
///
/// Without it, a service whose peer is down spends its own default timeout on the peer while its
/// caller has long given up: the gateway answered 504 for `/api/me` with Audit down, where the
/// truth (Audit unreachable) is a 503 the client can act on.
public enum CallDeadline {
    /// The instant the request being served must be answered by; nil outside a handler.
    @TaskLocal public static var current: ContinuousClock.Instant?

    /// Kept back from the inherited deadline for the reply to travel back to the caller.
    public static let replyMargin: Duration = .milliseconds(100)
}
