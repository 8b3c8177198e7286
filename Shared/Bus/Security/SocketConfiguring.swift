import CZeroMQ

extension ZMQSocket {
    /// Makes this socket a CURVE server (after a ZAP handler is installed on its context).
    func apply(_ security: ServerSecurity) throws(ZMQError) {
        guard case .curve(let keys, _) = security else { return }
        try set(ZMQ_CURVE_SERVER, Int32(1), "ZMQ_CURVE_SERVER")
        try set(ZMQ_CURVE_SECRETKEY, keys.secretKey, "ZMQ_CURVE_SECRETKEY")
        // ZAP is consulted for CURVE anyway; a domain makes the intent explicit in ZAP requests.
        try set(ZMQ_ZAP_DOMAIN, "compass", "ZMQ_ZAP_DOMAIN")
    }

    func apply(_ security: ClientSecurity) throws(ZMQError) {
        guard case .curve(let keys, let serverKey) = security else { return }
        try set(ZMQ_CURVE_SERVERKEY, serverKey, "ZMQ_CURVE_SERVERKEY")
        try set(ZMQ_CURVE_PUBLICKEY, keys.publicKey, "ZMQ_CURVE_PUBLICKEY")
        try set(ZMQ_CURVE_SECRETKEY, keys.secretKey, "ZMQ_CURVE_SECRETKEY")
    }

    /// ZMTP heartbeats: a silent peer is declared dead after `timeoutMs` and its connection
    /// dropped (and, on the connecting side, re-established when it comes back).
    func enableHeartbeats(intervalMs: Int32, timeoutMs: Int32) throws(ZMQError) {
        try set(ZMQ_HEARTBEAT_IVL, intervalMs, "ZMQ_HEARTBEAT_IVL")
        try set(ZMQ_HEARTBEAT_TIMEOUT, timeoutMs, "ZMQ_HEARTBEAT_TIMEOUT")
        try set(ZMQ_HEARTBEAT_TTL, timeoutMs, "ZMQ_HEARTBEAT_TTL")
    }

    /// How a connecting socket retries a connection that failed or broke: `intervalMs` after, then
    /// twice as long each time up to `maximumMs`; a connect unanswered for `connectTimeoutMs` counts
    /// as failed (each attempt resolves the host name again).
    func retryConnections(intervalMs: Int32, maximumMs: Int32, connectTimeoutMs: Int32) throws(ZMQError) {
        try set(ZMQ_RECONNECT_IVL, intervalMs, "ZMQ_RECONNECT_IVL")
        try set(ZMQ_RECONNECT_IVL_MAX, maximumMs, "ZMQ_RECONNECT_IVL_MAX")
        try set(ZMQ_CONNECT_TIMEOUT, connectTimeoutMs, "ZMQ_CONNECT_TIMEOUT")
    }

    /// Bounds what one message may weigh: larger ones make libzmq drop the sender's connection.
    func limitMessageSize(_ bytes: Int64) throws(ZMQError) {
        try set(ZMQ_MAXMSGSIZE, bytes, "ZMQ_MAXMSGSIZE")
    }

    func setHighWaterMarks(send: Int32, receive: Int32) throws(ZMQError) {
        try set(ZMQ_SNDHWM, send, "ZMQ_SNDHWM")
        try set(ZMQ_RCVHWM, receive, "ZMQ_RCVHWM")
    }
}
