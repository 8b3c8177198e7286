/// Tuning of an ``RPCServer``; the defaults suit a service on one machine.
public struct RPCServerOptions: Sendable {
    /// Requests running at once; beyond it new ones are answered `unavailable` at once rather than
    /// queued without bound.
    public var maxInFlight = 4096
    /// Largest message accepted (`ZMQ_MAXMSGSIZE`); a larger one drops the sender's connection.
    public var maxMessageSize = BusDefaults.maxMessageSize
    /// Messages queued per peer each way before libzmq refuses more (replies beyond it are dropped
    /// and counted; the caller's deadline and retry cover them).
    public var highWaterMark = BusDefaults.highWaterMark
    public var heartbeatIntervalMs = BusDefaults.heartbeatIntervalMs
    public var heartbeatTimeoutMs = BusDefaults.heartbeatTimeoutMs
    /// What is kept of replies to methods that cache them (``RPCMethod/cachesReply``), to answer
    /// a retry: bounded by entries, bytes and age.
    public var idempotency = IdempotencyLimits()
    /// Peers (by CURVE admission name) whose `principal` is honoured; `nil` means every admitted
    /// peer. Over plaintext every principal is honoured: development only.
    public var principalAsserters: Set<String>? = nil
    /// Service principals that may act for any user (see
    /// ``BusRequestContext/isServiceWithoutUserAccess``); `nil` means every service.
    public var servicesActingForUsers: Set<String>? = nil
    /// How long ``RPCServer/shutdown()`` waits for running handlers before closing anyway.
    public var drainTimeout: Duration = .seconds(10)

    /// The event loop that polls the socket and runs the handlers; `nil`: the process's own when
    /// `BUS_EVENT_LOOP=single`, else a thread of the socket's own (``BusEventLoopMode``).
    public var eventLoop: BusEventLoop? = nil

    public init() {}
}
