/// Tuning of an ``EventSubscriber``: the same heartbeats and reconnection as an ``RPCClient``, so a
/// publisher that froze or vanished from the network without closing its connections is noticed
/// (``EventSubscriber/isConnected`` turns false) and connected to again once it answers.
public struct EventSubscriberOptions: Sendable {
    /// Events libzmq queues for this subscriber before it drops more (PUB never blocks).
    public var highWaterMark = BusDefaults.highWaterMark
    /// Events held for a consumer that is behind; more are dropped and counted.
    public var bufferLimit = 100_000
    /// `ZMQ_HEARTBEAT_IVL`: a ping to the publisher each interval on an idle connection.
    public var heartbeatIntervalMs = BusDefaults.heartbeatIntervalMs
    /// A publisher that answers no ping for this long (stopped, or its packets dropped, so no FIN
    /// ever comes) is declared gone: the connection is dropped and retried.
    public var heartbeatTimeoutMs = BusDefaults.heartbeatTimeoutMs
    public var reconnectIntervalMs = BusDefaults.reconnectIntervalMs
    public var reconnectIntervalMaxMs = BusDefaults.reconnectIntervalMaxMs
    public var connectTimeoutMs: Int32 = ZMQSocket.defaultConnectTimeoutMs

    public init() {}
}
