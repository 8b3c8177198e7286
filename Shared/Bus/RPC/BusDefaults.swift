/// The socket settings every bus endpoint shares unless told otherwise, written once so that a
/// client and the server it talks to, and a publisher and its subscribers, agree on them.
public enum BusDefaults {
    /// Largest message accepted (`ZMQ_MAXMSGSIZE`), either way: a document chunk and its
    /// envelope fit with room to spare; a larger message drops the sender's connection.
    public static let maxMessageSize: Int64 = 64 << 20
    /// Messages queued per peer each way before libzmq refuses more. Chosen, not libzmq's 1000,
    /// which a burst of acceptances reaches: 100,000 messages of a few hundred bytes each.
    public static let highWaterMark: Int32 = 100_000
    /// `ZMQ_HEARTBEAT_IVL`: a ping each second on an idle connection.
    public static let heartbeatIntervalMs: Int32 = 1000
    /// `ZMQ_HEARTBEAT_TIMEOUT`: a peer silent this long (frozen, or its host gone) is dropped and
    /// reconnected to, rather than holding calls until their deadlines.
    public static let heartbeatTimeoutMs: Int32 = 5000
    /// `ZMQ_RECONNECT_IVL`: a connecting socket retries a lost or refused connection this long
    /// after, resolving the host name again.
    public static let reconnectIntervalMs: Int32 = 100
    /// `ZMQ_RECONNECT_IVL_MAX`: each further retry waits twice as long as the last, up to this, so
    /// a peer that is gone for minutes costs a connect every 2 s, not ten a second.
    public static let reconnectIntervalMaxMs: Int32 = 2000
}
