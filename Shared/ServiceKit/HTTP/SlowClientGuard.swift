import HTTPTypes
import Locks
import NIOCore
import NIOHTTPTypes

/// The limits a connection lives under, so slow or stalled clients cannot hold a server's
/// connections (slowloris) or its memory (a download nobody reads): the gateway's API and every
/// process's health server (``HealthServer``).
public struct SlowClientLimits: Sendable, Equatable {
    /// How long a request's head may take to arrive, from the connection's start or the end of
    /// the previous response: a client dribbling header bytes is cut off here.
    public var headerTimeout: Duration
    /// The longest silence in the middle of a request body (an upload may take long, but not
    /// stall).
    public var bodyTimeout: Duration
    /// How long a response may stay blocked on a client that does not read.
    public var writeTimeout: Duration
    /// Connections open at once; one more is closed as soon as it is accepted.
    public var maximumConnections: Int

    public init(headerTimeout: Duration, bodyTimeout: Duration, writeTimeout: Duration, maximumConnections: Int) {
        self.headerTimeout = headerTimeout
        self.bodyTimeout = bodyTimeout
        self.writeTimeout = writeTimeout
        self.maximumConnections = maximumConnections
    }
}

/// Counts a server's open connections against ``SlowClientLimits/maximumConnections``.
public final class ConnectionCount: Sendable {
    private let open = LockedValue(0)

    public init() {}

    /// Takes a place; false (and nothing taken) when every place is taken.
    func admit(limit: Int) -> Bool {
        open.withLock { count in
            guard count < limit else { return false }
            count += 1
            return true
        }
    }

    func release() { open.withLock { $0 -= 1 } }

    var current: Int { open.withLock { $0 } }
}

/// Enforces ``SlowClientLimits`` on one connection, placed after Hummingbird's HTTP decoding so it
/// sees request heads, body parts and ends, and the response parts going out. When a deadline
/// passes, the connection is closed (a client that sends nothing in time gets no answer, as
/// nginx's `client_header_timeout` does).
///
/// The request's deadline moves on every head, body part and response, but its timer is not
/// re-armed each time: scheduling and cancelling two or three NIO timers per request was a tenth
/// of the gateway's CPU under load. One timer stays armed at or before the deadline; when it fires
/// early (the deadline moved later meanwhile) it re-arms for the deadline as it now is. Only a
/// deadline earlier than the armed timer re-arms at once.
public final class SlowClientGuard: ChannelDuplexHandler, RemovableChannelHandler {
    public typealias InboundIn = HTTPRequestPart
    public typealias InboundOut = HTTPRequestPart
    public typealias OutboundIn = HTTPResponsePart
    public typealias OutboundOut = HTTPResponsePart

    private let limits: SlowClientLimits
    private let connections: ConnectionCount
    private var admitted = false
    /// When the connection is closed unless the client makes progress: the head's or the body's
    /// deadline, whichever the request is waiting for; nil while the response is the server's to send.
    private var requestDeadline: NIODeadline?
    /// The timer that checks ``requestDeadline``, and when it fires.
    private var requestTimer: (task: Scheduled<Void>, firesAt: NIODeadline)?
    /// Runs while the client does not read what is sent.
    private var writeTimer: Scheduled<Void>?

    public init(limits: SlowClientLimits, connections: ConnectionCount) {
        self.limits = limits
        self.connections = connections
    }

    public func handlerAdded(context: ChannelHandlerContext) {
        if context.channel.isActive { admit(context) }
    }

    public func channelActive(context: ChannelHandlerContext) {
        admit(context)
        context.fireChannelActive()
    }

    /// Takes a place under the cap and starts the head's deadline, or closes the connection when
    /// every place is taken. Done once the connection is active (the pipeline is set up before).
    private func admit(_ context: ChannelHandlerContext) {
        guard !admitted else { return }
        guard connections.admit(limit: limits.maximumConnections) else {
            context.close(promise: nil)
            return
        }
        admitted = true
        setRequestDeadline(context, after: limits.headerTimeout)
    }

    public func handlerRemoved(context: ChannelHandlerContext) {
        requestTimer?.task.cancel()
        requestTimer = nil
        requestDeadline = nil
        writeTimer?.cancel()
        if admitted {
            admitted = false
            connections.release()
        }
    }

    public func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head, .body:
            // A head came in time; each body part restarts the body's silence limit.
            setRequestDeadline(context, after: limits.bodyTimeout)
        case .end:
            setRequestDeadline(context, after: nil)  // the request is whole: the response is the server's to send
        }
        context.fireChannelRead(data)
    }

    public func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        if case .end = unwrapOutboundIn(data) {
            // The next request's head must come within the header limit (keep-alive).
            setRequestDeadline(context, after: limits.headerTimeout)
        }
        context.write(data, promise: promise)
    }

    public func channelWritabilityChanged(context: ChannelHandlerContext) {
        writeTimer?.cancel()
        // A client that stopped reading what is sent has this long to start again.
        writeTimer = context.channel.isWritable ? nil : Self.closing(context, after: limits.writeTimeout)
        context.fireChannelWritabilityChanged()
    }

    /// Moves the request's deadline to `timeout` from now (none when nil); arms the timer only
    /// when none is armed at or before the new deadline.
    private func setRequestDeadline(_ context: ChannelHandlerContext, after timeout: Duration?) {
        guard admitted else { return }
        guard let timeout else {
            requestDeadline = nil
            return
        }
        let deadline = NIODeadline.now() + TimeAmount(timeout)
        requestDeadline = deadline
        if let armed = requestTimer, armed.firesAt <= deadline { return }
        requestTimer?.task.cancel()
        arm(context, at: deadline)
    }

    private func arm(_ context: ChannelHandlerContext, at deadline: NIODeadline) {
        let task = context.eventLoop.assumeIsolated().scheduleTask(deadline: deadline) { [self] in
            requestTimerFired(context)
        }
        requestTimer = (task, deadline)
    }

    /// Closes the connection if its deadline has passed, else re-arms for the deadline as it now is.
    private func requestTimerFired(_ context: ChannelHandlerContext) {
        requestTimer = nil
        guard let deadline = requestDeadline else { return }  // the server is answering: no deadline runs
        if deadline <= .now() {
            context.channel.close(promise: nil)
        } else {
            arm(context, at: deadline)
        }
    }

    /// Closes the connection after `timeout` unless cancelled first.
    private static func closing(_ context: ChannelHandlerContext, after timeout: Duration) -> Scheduled<Void> {
        let channel = context.channel
        return context.eventLoop.assumeIsolated().scheduleTask(in: TimeAmount(timeout)) { channel.close(promise: nil) }
    }
}
