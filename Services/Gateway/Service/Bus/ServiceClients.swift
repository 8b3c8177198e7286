import Bus
import Foundation
import Logging
import ServiceKit

/// The gateway's RPC clients, one per service it talks to, made at start (connecting does not
/// wait for the service) and closed at shutdown. Every call carries the request's trace context,
/// the principal the gateway acts for, and a deadline, so a request never waits past
/// `GATEWAY_BUS_TIMEOUT`: a service that is not connected at all fails fast with `unavailable`
/// (503), one that does not answer in time with `deadline_exceeded` (504).
public final class ServiceClients: Sendable {
    let clients: [ServiceName: RPCClient]
    let timeout: Duration
    /// How long a call waits for a first connection to a service before answering `unavailable`.
    let connectGrace: Duration

    init(clients: [ServiceName: RPCClient], timeout: Duration, connectGrace: Duration = .milliseconds(500)) {
        self.clients = clients
        self.timeout = timeout
        self.connectGrace = min(connectGrace, timeout)
    }

    /// Connects to `services` as `peers` configures them.
    static func connect(_ services: [ServiceName], peers: GatewayPeers, timeout: Duration, logger: Logger) async throws -> ServiceClients {
        var clients: [ServiceName: RPCClient] = [:]
        for service in services {
            clients[service] = try await RPCClient.connect(
                to: service.rawValue, endpoints: peers.endpoints[service] ?? [service.defaultRPCEndpoint],
                security: try peers.security(for: service), logger: logger)
        }
        return ServiceClients(clients: clients, timeout: timeout)
    }

    func client(_ service: ServiceName) throws -> RPCClient {
        guard let client = clients[service] else { throw BusError(.unavailable, "the \(service.rawValue) service is not configured") }
        return client
    }

    /// Calls `method` on `service` for the request in `context`, acting for `principal`.
    package func call<M: RPCMethod>(
        _ service: ServiceName, _ method: M.Type, _ request: M.Request, principal: Principal, context: GatewayContext,
        idempotencyKey: String? = nil
    ) async throws -> M.Reply {
        try await call(service, method, request, principal: principal, traceparent: context.traceparent, idempotencyKey: idempotencyKey)
    }

    /// The same with the trace context given as text (a call made for several requests at once).
    func call<M: RPCMethod>(
        _ service: ServiceName, _ method: M.Type, _ request: M.Request, principal: Principal, traceparent: String,
        idempotencyKey: String? = nil
    ) async throws -> M.Reply {
        let client = try await connected(service)
        return try await client.call(
            method, request, principal: principal, idempotencyKey: idempotencyKey, timeout: timeout, traceparent: traceparent)
    }

    /// The same for calls that carry binary attachments either way (document chunks), with the
    /// trace context given as text so a response body's writer can call after the handler returned.
    func callWithAttachments<M: RPCMethod>(
        _ service: ServiceName, _ method: M.Type, _ request: M.Request, principal: Principal, traceparent: String,
        attachments: [Data] = []
    ) async throws -> (reply: M.Reply, attachments: [Data]) {
        let client = try await connected(service)
        return try await client.callWithAttachments(
            method, request, principal: principal, timeout: timeout, traceparent: traceparent, attachments: attachments)
    }

    /// `service`'s client once it has a connection: a call made while the connection is (re)made,
    /// as just after start or a peer's restart, waits up to `connectGrace` for it; then the
    /// service is unreachable (503), rather than the call waiting out its whole deadline.
    private func connected(_ service: ServiceName) async throws -> RPCClient {
        let client = try client(service)
        if !client.isConnected {
            let end = ContinuousClock.now + connectGrace
            while !client.isConnected, ContinuousClock.now < end { try await Task.sleep(for: .milliseconds(10)) }
            guard client.isConnected else { throw BusError.unreachable(service.rawValue) }
        }
        return client
    }

    /// Whether `service` has a live connection (what `/readyz` checks).
    func isConnected(_ service: ServiceName) -> Bool { clients[service]?.isConnected ?? false }

    func close() async {
        for client in clients.values { await client.close() }
    }
}
