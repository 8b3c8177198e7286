import Bus
import Logging
import SystemCall

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The health server's `poll` loop, run on its own thread: accepts up to
/// ``HealthServer/Limits/maxConnections`` clients, reads each one's request without ever blocking,
/// answers through ``HealthRoutes`` and closes. A client that is slow, silent or sends garbage only
/// holds its own slot until its deadline; the others are served meanwhile.
struct HealthServerLoop {
    let listener: Int32
    /// Readable when the server must stop (the other end of a socket pair gets a byte).
    let wake: Int32
    let limits: HealthServer.Limits
    let routes: HealthRoutes
    let logger: Logger
    private var connections: [HTTPConnection] = []

    init(listener: Int32, wake: Int32, limits: HealthServer.Limits, routes: HealthRoutes, logger: Logger) {
        self.listener = listener
        self.wake = wake
        self.limits = limits
        self.routes = routes
        self.logger = logger
    }

    /// Serves until the wake descriptor becomes readable; throws only if `poll` itself fails.
    mutating func run() throws(SystemCallError) {
        defer { closeAll() }
        while true {
            let accepting = connections.count < limits.maxConnections
            var descriptors = [pollfd(fd: wake, events: Int16(POLLIN), revents: 0)]
            if accepting { descriptors.append(pollfd(fd: listener, events: Int16(POLLIN), revents: 0)) }
            descriptors += connections.map { pollfd(fd: $0.descriptor, events: $0.events, revents: 0) }
            let timeout = pollTimeout()
            _ = try systemCall("poll") { poll(&descriptors, nfds_t(descriptors.count), timeout) }

            if descriptors[0].revents != 0 { return }
            let first = accepting ? 2 : 1
            // Backwards, so closing connection `index` leaves the lower indices valid.
            for index in stride(from: connections.count - 1, through: 0, by: -1)
            where descriptors[first + index].revents != 0 {
                handle(index, events: descriptors[first + index].revents)
            }
            dropExpired()
            if accepting && descriptors[1].revents != 0 { acceptPending() }
        }
    }

    /// Milliseconds until the earliest connection deadline, or -1 (forever) when there is none.
    private func pollTimeout() -> Int32 {
        guard let earliest = connections.map(\.deadline).min() else { return -1 }
        let remaining = earliest - .now
        if remaining <= .zero { return 0 }
        let milliseconds = remaining.inMilliseconds + 1
        return Int32(clamping: milliseconds)
    }

    private mutating func acceptPending() {
        while connections.count < limits.maxConnections {
            do {
                guard let client = try nonBlockingSystemCall("accept", { accept(listener, nil, nil) }) else { return }
                do {
                    try TCPListener.setNonBlocking(client)
                    _ = try systemCall("fcntl(F_SETFD)") { fcntl(client, F_SETFD, FD_CLOEXEC) }
                } catch {
                    closeDescriptor(client)
                    throw error
                }
                connections.append(
                    HTTPConnection(descriptor: client, stage: .reading([]), deadline: .now + limits.requestTimeout))
            } catch {
                // ECONNABORTED (client gave up while queued), EMFILE, …: skip this round, keep serving.
                logger.debug("health server accept failed", metadata: ["error": "\(error)"])
                return
            }
        }
    }

    private mutating func handle(_ index: Int, events: Int16) {
        if events & Int16(POLLERR | POLLNVAL) != 0 { return close(index) }
        do {
            switch connections[index].stage {
            case .reading(var buffer):
                guard let chunk = try receive(connections[index].descriptor) else { return }
                if chunk.isEmpty { return close(index) }  // the client left before finishing a request
                buffer += chunk
                switch HTTPRequestHead.parse(buffer, limit: limits.maxHeaderBytes) {
                case .incomplete: connections[index].stage = .reading(buffer)
                case .tooLarge: try respond(index, .error(431))
                case .malformed: try respond(index, .error(400))
                case .complete(let request): try respond(index, routes.respond(to: request))
                }
            case .writing:
                try sendPending(index)
            case .draining:
                guard let chunk = try receive(connections[index].descriptor) else { return }
                if chunk.isEmpty { close(index) }
            }
        } catch {
            logger.debug("health connection failed", metadata: ["error": "\(error)"])
            close(index)
        }
    }

    private mutating func respond(_ index: Int, _ response: HTTPResponse) throws {
        connections[index].stage = .writing(response.serialized(), sent: 0)
        try sendPending(index)
    }

    /// Sends what the socket takes now; once everything is out, half-closes and starts draining.
    private mutating func sendPending(_ index: Int) throws {
        guard case .writing(let bytes, var sent) = connections[index].stage else { return }
        let descriptor = connections[index].descriptor
        while sent < bytes.count {
            let count = try bytes.withUnsafeBytes { buffer in
                try nonBlockingSystemCall("send") {
                    send(descriptor, buffer.baseAddress! + sent, buffer.count - sent, Int32(MSG_NOSIGNAL))
                }
            }
            guard let count else { break }
            sent += count
        }
        if sent < bytes.count {
            connections[index].stage = .writing(bytes, sent: sent)
            return
        }
        _ = try systemCall("shutdown") { shutdown(descriptor, Int32(SHUT_WR)) }
        connections[index].stage = .draining
        connections[index].deadline = min(connections[index].deadline, .now + limits.lingerTimeout)
    }

    /// Up to 4 KiB from a readable socket; empty at end of stream, `nil` if nothing is there after all.
    private func receive(_ descriptor: Int32) throws -> [UInt8]? {
        var chunk = [UInt8](repeating: 0, count: 4096)
        let count = try chunk.withUnsafeMutableBytes { buffer in
            try nonBlockingSystemCall("read") { read(descriptor, buffer.baseAddress!, buffer.count) }
        }
        guard let count else { return nil }
        return Array(chunk[..<count])
    }

    private mutating func dropExpired() {
        let now = ContinuousClock.now
        for index in stride(from: connections.count - 1, through: 0, by: -1) where connections[index].deadline <= now {
            if case .reading(let buffer) = connections[index].stage, !buffer.isEmpty {
                // Best effort, one non-blocking send: the client may never read it.
                let bytes = HTTPResponse.error(408).serialized()
                _ = bytes.withUnsafeBytes {
                    send(connections[index].descriptor, $0.baseAddress!, $0.count, Int32(MSG_NOSIGNAL))
                }
            }
            close(index)
        }
    }

    private mutating func close(_ index: Int) {
        closeDescriptor(connections[index].descriptor)
        connections.remove(at: index)
    }

    private mutating func closeAll() {
        for connection in connections { closeDescriptor(connection.descriptor) }
        connections.removeAll()
    }
}
