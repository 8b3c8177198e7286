import CZeroMQ
import Foundation

/// The sockets one ``SocketLoop`` owns, built on the loop's own thread by the caller's setup
/// closure: the main socket, and the helpers that must share its context and thread: a ZAP
/// handler (CURVE admission) and a monitor (connection events).
final class LoopSockets {
    let context: ZMQContext
    private(set) var main: ZMQSocket?
    private(set) var zap: (socket: ZMQSocket, policy: ZAPPolicy)?
    private(set) var monitor: ZMQSocket?

    init() throws(ZMQError) { context = try ZMQContext() }

    /// Creates the main socket. Call ``installZAPHandler(_:)`` before binding a CURVE server and
    /// ``attachMonitor(to:)`` before binding or connecting, or their first events are missed.
    func makeMain(_ kind: ZMQSocket.Kind) throws(ZMQError) -> ZMQSocket {
        let socket = try ZMQSocket(kind, context: context)
        main = socket
        return socket
    }

    /// Binds the ZAP endpoint of this context. CURVE without a ZAP handler admits any client that
    /// knows the server key, so a CURVE server must call this before it binds.
    func installZAPHandler(_ policy: ZAPPolicy) throws(ZMQError) {
        let socket = try ZMQSocket(.reply, context: context)
        try socket.bind("inproc://zeromq.zap.01")
        zap = (socket, policy)
    }

    func attachMonitor(to socket: ZMQSocket) throws(ZMQError) {
        let endpoint = "inproc://monitor.\(MessageID.text(of: MessageID.make()))"
        try socket.monitor(endpoint, events: MonitorEvent.watched)
        let pair = try ZMQSocket(.pair, context: context)
        try pair.connect(endpoint)
        monitor = pair
    }

    /// How long closing waits for messages already handed to libzmq (a reply sent just before a
    /// graceful shutdown) to go out. Bounded, so shutdown never hangs on a peer that is gone.
    static let closeLingerMs: Int32 = 2000

    /// Closes every socket, the monitor and ZAP handler after the socket they serve.
    func closeAll() {
        // Sockets live with LINGER 0 (a dropped socket must not hold the context); at an orderly
        // close, give queued messages a bounded moment to leave.
        try? main?.set(ZMQ_LINGER, Self.closeLingerMs, "ZMQ_LINGER")
        main?.close()
        monitor?.close()
        zap?.socket.close()
        // Wait here, on the loop's thread, for queued messages to leave: the loop reports itself
        // stopped only afterwards, so a process that exits right after shutdown loses nothing.
        context.terminate()
    }
}
