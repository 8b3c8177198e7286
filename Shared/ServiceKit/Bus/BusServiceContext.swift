import Bus
import Contracts
import Foundation
import Locks
import Logging
import Postgres
import ServiceLifecycle

/// Everything a bus service's handlers stand on, built by ``BusServiceMain`` from the environment:
/// the database pool (migrated), the RPC server, the event publisher with the outbox and its
/// relay, and clients of the other services.
public final class BusServiceContext: Sendable {
    public let name: String
    public let runtime: ServiceRuntime
    public let bus: BusSettings
    public let pool: PostgresPool
    public let server: RPCServer
    public let publisher: EventPublisher
    public let outbox: Outbox
    public var logger: Logger { runtime.logger }
    private let clients = LockedValue<[ServiceName: RPCClient]>([:])
    private let consumers = LockedValue<[String: EventConsumer]>([:])

    init(
        name: String, runtime: ServiceRuntime, bus: BusSettings, pool: PostgresPool, server: RPCServer,
        publisher: EventPublisher, outbox: Outbox
    ) {
        self.name = name
        self.runtime = runtime
        self.bus = bus
        self.pool = pool
        self.server = server
        self.publisher = publisher
        self.outbox = outbox
    }

    /// A client of another service (one per peer, shared by all callers).
    public func client(for peer: ServiceName) async throws -> RPCClient {
        if let existing = clients.withLock({ $0[peer] }) { return existing }
        let client = try await RPCClient.connect(
            to: peer.rawValue, endpoints: bus.peers[peer]?.rpc ?? [peer.defaultRPCEndpoint],
            security: try bus.clientSecurity(for: peer), logger: logger)
        let winner = clients.withLock { clients -> RPCClient in
            if let raced = clients[peer] { return raced }
            clients[peer] = client
            return client
        }
        if winner !== client { await client.close() }
        return winner
    }

    /// Runs `apply` for every event `peer` publishes, exactly once, in order (see ``EventConsumer``).
    public func consumeEvents(from peer: ServiceName, apply: @escaping EventConsumer.Apply) async throws {
        let subscriber = try await EventSubscriber.connect(
            endpoints: bus.peers[peer]?.events ?? [peer.defaultEventsEndpoint], topics: [""],
            security: try bus.clientSecurity(for: peer), logger: logger)
        let consumer = EventConsumer(
            publisher: peer.rawValue, subscriber: subscriber, client: try await client(for: peer), pool: pool, schema: name,
            logger: logger, apply: apply)
        consumers.withLock { $0[peer.rawValue] = consumer }
        runtime.addService(consumer)
    }

    /// The consumer of `publisher`'s events, once ``consumeEvents(from:apply:)`` made it.
    func consumer(of publisher: String) -> EventConsumer? { consumers.withLock { $0[publisher] } }

    func closeClients() async {
        for client in clients.withLock({ Array($0.values) }) { await client.close() }
    }
}
