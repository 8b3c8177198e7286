/// Tuning of an ``RPCClient``.
public struct RPCClientOptions: Sendable {
    /// A call's deadline when the caller names none.
    public var defaultTimeout: Duration = .seconds(5)
    /// For idempotent calls: how long one attempt waits before it is sent again with the same
    /// request id and idempotency key (to the next server, when several are connected). A server
    /// still running the call joins the new attempt to that run, so a slow call is not run again.
    public var attemptTimeout: Duration = .seconds(1)
    public var maxMessageSize = BusDefaults.maxMessageSize
    public var highWaterMark = BusDefaults.highWaterMark
    public var heartbeatIntervalMs = BusDefaults.heartbeatIntervalMs
    public var heartbeatTimeoutMs = BusDefaults.heartbeatTimeoutMs
    public var reconnectIntervalMs = BusDefaults.reconnectIntervalMs
    public var reconnectIntervalMaxMs = BusDefaults.reconnectIntervalMaxMs
    /// How long one TCP connect may stay unanswered before libzmq gives up on it and tries again,
    /// resolving the host name anew (`ZMQ_CONNECT_TIMEOUT`). Without it a connect to an address
    /// that drops packets (a name that first resolved to a peer not yet, or no longer, there)
    /// waits for the kernel's SYN retries, about two minutes, before the name is looked up again.
    public var connectTimeoutMs: Int32 = ZMQSocket.defaultConnectTimeoutMs

    /// The event loop that polls the socket; `nil`: the process's own when
    /// `BUS_EVENT_LOOP=single`, else a thread of the socket's own (``BusEventLoopMode``).
    public var eventLoop: BusEventLoop? = nil

    public init() {}
}
