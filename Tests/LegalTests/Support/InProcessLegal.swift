import Bus
import Contracts
import Foundation
import LegalService
import Postgres
import ServiceKit
import TestSupport
import Testing

/// The Legal service's real handlers, store and outbox in this process, on a private schema of
/// the test cluster, behind a real RPC server and PUB socket on ephemeral loopback ports. Tests
/// call it with a real client; nothing of ours is replaced by a stand-in. The relay is driven by
/// the test (``relay()``) so event timing is deterministic.
struct InProcessLegal {
    let schema: TestSchema
    let store: LegalStore
    let outbox: Outbox
    let server: RPCServer
    let publisher: EventPublisher
    let relayer: OutboxRelay
    let client: RPCClient

    static let operatorPrincipal = Principal.operator("test-operator")

    /// Runs `body` against a freshly migrated schema (not seeded unless `seeded`), then stops everything.
    static func with<T>(seeded: Bool = false, _ body: (InProcessLegal) async throws -> T) async throws -> T {
        try await TestDatabase.withSchema { schema in
            let logger = testLogger()
            let migrations = OutboxSchema.migrations + (try LegalServiceDescription.migrations())
            try await Migrator(schema: schema.name, migrations: migrations, logger: logger).run(on: schema.pool)
            let store = LegalStore(pool: schema.pool, schema: schema.name)
            let outbox = Outbox(schema: schema.name)
            let publisher = try await EventPublisher.bind(name: "legal", endpoints: ["tcp://127.0.0.1:*"], logger: logger)
            let server = RPCServer(name: "legal", endpoints: ["tcp://127.0.0.1:*"], logger: logger)
            EventsSinceHandler.register(service: "legal", outbox: outbox, pool: schema.pool, on: server)
            LegalHandlers(store: store, outbox: outbox).register(on: server)
            let relayer = OutboxRelay(outbox: outbox, pool: schema.pool, publisher: publisher, logger: logger)
            try await server.start()
            let client = try await RPCClient.connect(to: "legal", endpoints: server.boundEndpoints, logger: logger)
            let legal = InProcessLegal(
                schema: schema, store: store, outbox: outbox, server: server, publisher: publisher, relayer: relayer, client: client)
            if seeded { try await LegalSeeder(store: store, outbox: outbox, logger: logger).seedDefaults() }
            let result: Result<T, any Error>
            do { result = .success(try await body(legal)) } catch { result = .failure(error) }
            await client.close()
            await server.shutdown()
            await publisher.close()
            return try result.get()
        }
    }

    /// How long a call may take before it fails. No test here is about a deadline: this only keeps
    /// a lost reply from hanging the run, and is generous because the suites start together in one
    /// process on a 2-core CI machine, in a debug build. (A 1 MiB version read once failed here
    /// past 10 s: a read slower than the client's 1 s attempt timeout was sent again under a new id
    /// and the earlier attempts' replies were dropped, so it could never be answered. Retries keep
    /// the call's id now and the server joins them to the run in progress.)
    static let deadline: Duration = .seconds(60)

    /// Calls `method`, failing the call after ``deadline``.
    func call<M: RPCMethod>(_ method: M.Type, _ request: M.Request, principal: Principal? = nil) async throws -> M.Reply {
        try await client.call(method, request, principal: principal, timeout: Self.deadline)
    }

    /// Publishes as an operator.
    @discardableResult
    func publish(
        _ type: LegalDocumentType, _ version: String, _ content: String, lastUpdated: Date? = nil, effectiveAt: Date? = nil,
        material: Bool = true
    ) async throws -> LegalVersionSummary {
        try await call(
            LegalPublish.self,
            LegalPublish.Request(
                type: type, version: version, content: content, lastUpdated: lastUpdated, effectiveAt: effectiveAt, material: material),
            principal: Self.operatorPrincipal)
    }

    /// The error code a call fails with, or `nil` when it succeeds.
    func errorCode<M: RPCMethod>(_ method: M.Type, _ request: M.Request, principal: Principal? = nil) async -> ErrorCode? {
        do {
            _ = try await call(method, request, principal: principal)
            return nil
        } catch let error as BusError {
            return error.code
        } catch {
            Issue.record("unexpected error \(error)")
            return nil
        }
    }

    /// Sends `payload` as raw JSON under `type` and returns the reply's error code (`nil`: success).
    func rawErrorCode(_ type: String, _ payload: String, principal: Principal? = operatorPrincipal) async throws -> ErrorCode? {
        let request = Envelope(kind: .request, type: type, principal: principal, payload: Data(payload.utf8))
        return try await client.send(request, timeout: InProcessLegal.deadline).envelope.error?.code
    }

    /// Publishes every committed outbox row now.
    @discardableResult
    func relay() async throws -> Int { try await relayer.relayBatch() }

    /// Rows in the versions table and the outbox: what a refused request must leave unchanged.
    func counts() async throws -> Counts {
        let name = schema.name
        return try await schema.pool.withConnection { db in
            Counts(
                versions: try db.query("SELECT count(*) FROM \(name).versions")[0].decode(Int.self, column: 0),
                events: try db.query("SELECT count(*) FROM \(name).outbox")[0].decode(Int.self, column: 0))
        }
    }

    struct Counts: Equatable, CustomStringConvertible {
        var versions: Int
        var events: Int
        var description: String { "\(versions) versions, \(events) events" }
    }

    /// `legal.events.since`: the events after `after`, decoded.
    func eventsSince(_ after: Int64 = 0) async throws -> [Envelope] {
        try await LegalEventsSince.fetch(from: client, after: after)
    }
}

/// `legal.events.since` over a client: the catch-up path every subscriber uses.
enum LegalEventsSince {
    static func fetch(from client: RPCClient, after: Int64) async throws -> [Envelope] {
        let request = Envelope(
            kind: .request, type: EventsSince.type(for: "legal"), payload: try BusJSON.encode(EventsSince.Request(after: after)))
        let (reply, attachments) = try await client.send(request, timeout: InProcessLegal.deadline)
        if let error = reply.error { throw error }
        let page = try reply.decodePayload(EventsSince.Reply.self)
        #expect(page.count == attachments.count)
        return try attachments.map { try EnvelopeCodec.decode($0) }
    }
}

/// A value as the bus carries it (dates to the millisecond): for comparing values that reached
/// the test by different paths (a store call, a reply), whose `Date`s may differ below a microsecond.
func wire<T: Encodable>(_ value: T) throws -> String {
    String(decoding: try BusJSON.encode(value), as: UTF8.self)
}
