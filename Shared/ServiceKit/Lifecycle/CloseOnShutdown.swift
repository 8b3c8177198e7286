import ServiceLifecycle

/// A lifecycle `Service` that does nothing until graceful shutdown (or the group's cancellation),
/// then runs `close` once and returns.
///
/// A `ServiceGroup` stops its services in reverse order of addition, so adding one of these right
/// after whatever uses a resource closes that resource only once its users have stopped: the pool
/// after the handlers, the bus clients after the HTTP server has drained. Cancellation closes too,
/// so a cancelled group releases sockets and connections as a graceful one does.
/// swift-service-lifecycle's `ClosureService` runs a closure at once; this waits for shutdown first.
public struct CloseOnShutdown: Service, CustomStringConvertible {
    /// What the group's log lines call this service ("Starting service", "Service finished").
    public let description: String
    private let close: @Sendable () async -> Void

    /// - Parameters:
    ///   - name: what is closed, e.g. "postgres pool"; shown in the service group's log lines.
    ///   - close: runs once, when graceful shutdown reaches this service or the task is cancelled.
    public init(name: String, close: @escaping @Sendable () async -> Void) {
        self.description = name
        self.close = close
    }

    public func run() async {
        try? await gracefulShutdown()  // returns on shutdown, throws on cancellation: both mean close
        await close()
    }
}
