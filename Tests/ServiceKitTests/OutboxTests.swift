import Bus
import Contracts
import Foundation
import Postgres
import ServiceKit
import Synchronization
import TestSupport
import Testing

/// The transactional outbox end to end: real PostgreSQL, real PUB/SUB and RPC sockets.
@Suite struct OutboxTests {
    struct Happened: Codable, Sendable, Equatable { var n: Int }

    /// A publishing service: outbox in its schema, relay, PUB socket and `test.events.since`.
    struct Publisher {
        let outbox: Outbox
        let relay: OutboxRelay
        let publisher: EventPublisher
        let server: RPCServer
        let pool: PostgresPool

        /// A publishing service named `service`, its events and its bus methods bound where asked.
        static func start(
            in schema: TestSchema, service: String = "test", events: String = "tcp://127.0.0.1:*", rpc: String = "tcp://127.0.0.1:*"
        ) async throws -> Publisher {
            let logger = testLogger()
            try await Migrator(schema: schema.name, migrations: OutboxSchema.migrations, logger: logger).run(on: schema.pool)
            let outbox = Outbox(schema: schema.name)
            let publisher = try await EventPublisher.bind(name: service, endpoints: [events], logger: logger)
            let server = RPCServer(name: service, endpoints: [rpc], logger: logger)
            EventsSinceHandler.register(service: service, outbox: outbox, pool: schema.pool, on: server)
            try await server.start()
            let relay = OutboxRelay(outbox: outbox, pool: schema.pool, publisher: publisher, logger: logger)
            return Publisher(outbox: outbox, relay: relay, publisher: publisher, server: server, pool: schema.pool)
        }

        func write(_ numbers: some Sequence<Int>) async throws {
            let (outbox, list) = (self.outbox, Array(numbers))
            try await pool.withTransaction { db in
                for n in list { try outbox.append(type: "test.happened", Happened(n: n), on: db) }
            }
        }

        func stop() async {
            await server.shutdown()
            await publisher.close()
        }
    }

    /// A consuming service's schema: what it applied, with the publisher's sequence as key so a
    /// second application of one event would fail the test with a unique violation.
    static func prepareConsumer(_ schema: TestSchema) async throws {
        try await Migrator(schema: schema.name, migrations: OutboxSchema.migrations, logger: testLogger()).run(on: schema.pool)
        try await schema.pool.withConnection { db in
            try db.executeScript("CREATE TABLE \(schema.name).applied (sequence bigint PRIMARY KEY, n int NOT NULL)")
        }
    }

    static func consumer(
        _ schema: TestSchema, _ publisher: Publisher, subscribeTo endpoints: [String]? = nil,
        catchUpInterval: Duration = .seconds(5)
    ) async throws -> (EventConsumer, EventSubscriber, RPCClient) {
        let logger = testLogger()
        let subscriber = try await EventSubscriber.connect(endpoints: endpoints ?? publisher.publisher.boundEndpoints, topics: [""], logger: logger)
        let client = try await RPCClient.connect(to: "test", endpoints: publisher.server.boundEndpoints, logger: logger)
        let name = schema.name
        let consumer = EventConsumer(
            publisher: "test", subscriber: subscriber, client: client, pool: schema.pool, schema: name,
            catchUpInterval: catchUpInterval, logger: logger
        ) { event, db in
            let happened = try event.decodePayload(Happened.self)
            try db.execute("INSERT INTO \(name).applied (sequence, n) VALUES ($1, $2)", event.sequence!, happened.n)
        }
        return (consumer, subscriber, client)
    }

    static func applied(_ schema: TestSchema) async throws -> [(Int64, Int)] {
        let name = schema.name
        return try await schema.pool.withConnection { db in
            try db.query("SELECT sequence, n FROM \(name).applied ORDER BY sequence").map { try $0.decode(Int64.self, Int.self) }
        }
    }

    /// Polls `condition` until it holds. The timeout only guards against a hang: in a fresh
    /// clone's first minutes (every suite starting at once on 2 cores) the unreachable-publisher
    /// test once logged three of its four quick failures in 20 s, so the guard is a minute.
    static func waitUntil(_ timeout: Duration = .seconds(60), _ condition: () async throws -> Bool) async throws {
        let end = ContinuousClock.now + timeout
        while ContinuousClock.now < end {
            if try await condition() { return }
            try await Task.sleep(for: .milliseconds(50))
        }
        Issue.record("condition not met within \(timeout)")
    }

    @Test func rolledBackEventsAreNeverPublished() async throws {
        try await TestDatabase.withSchema { schema in
            let publisher = try await Publisher.start(in: schema)
            let subscriber = try await EventSubscriber.connect(endpoints: publisher.publisher.boundEndpoints, topics: [""], logger: testLogger())
            try await Task.sleep(for: .milliseconds(300))  // slow joiner

            struct Abort: Error {}
            let outbox = publisher.outbox
            await #expect(throws: Abort.self) {
                try await schema.pool.withTransaction { db in
                    try outbox.append(type: "test.happened", Happened(n: 1), on: db)
                    throw Abort()
                }
            }
            try await publisher.write([2])
            #expect(try await publisher.relay.relayBatch() == 1)
            #expect(try await publisher.relay.relayBatch() == 0)

            let event = try await withTimeout(.seconds(10), "the committed event") {
                var iterator = subscriber.makeAsyncIterator()
                return await iterator.next()
            }
            #expect(event?.envelope.sequence == 1)
            #expect(try event?.envelope.decodePayload(Happened.self) == Happened(n: 2))
            let rows = try await schema.pool.withConnection { db in
                try db.query("SELECT count(*) FROM \(schema.name).outbox")[0].decode(Int.self, column: 0)
            }
            #expect(rows == 1)
            await subscriber.close()
            await publisher.stop()
        }
    }

    @Test func lateSubscriberReceivesAllFiveHundredInOrderOnce() async throws {
        try await TestDatabase.withSchema { publisherSchema in
            try await TestDatabase.withSchema { consumerSchema in
                let publisher = try await Publisher.start(in: publisherSchema)
                // 500 events in 50 transactions, published before anyone listens, four at a time (the
                // pool's size: more would only queue for a connection, and time out on a loaded machine).
                try await withThrowingTaskGroup(of: Void.self) { group in
                    for batch in 0..<50 {
                        if batch >= 4 { try await group.next() }
                        group.addTask { try await publisher.write((batch * 10)..<(batch * 10 + 10)) }
                    }
                    try await group.waitForAll()
                }
                while try await publisher.relay.relayBatch() > 0 {}

                try await Self.prepareConsumer(consumerSchema)
                let (consumer, subscriber, client) = try await Self.consumer(consumerSchema, publisher)
                let running = Task { try await consumer.run() }
                try await Self.waitUntil { try await consumer.cursor() == 500 }

                // Then live: ten more over pub/sub.
                try await publisher.write(500..<510)
                try await publisher.relay.relayBatch()
                try await Self.waitUntil { try await consumer.cursor() == 510 }

                let applied = try await Self.applied(consumerSchema)
                #expect(applied.map(\.0) == Array(1...510))
                #expect(Set(applied.map(\.1)) == Set(0..<510))
                running.cancel()
                _ = try? await running.value
                await subscriber.close()
                await client.close()
                await publisher.stop()
            }
        }
    }

    @Test func lostPublicationsAreFoundByPeriodicCatchUp() async throws {
        try await TestDatabase.withSchema { publisherSchema in
            try await TestDatabase.withSchema { consumerSchema in
                let publisher = try await Publisher.start(in: publisherSchema)
                try await Self.prepareConsumer(consumerSchema)
                // Subscribed to nowhere: every pub/sub delivery is lost.
                let (consumer, subscriber, client) = try await Self.consumer(
                    consumerSchema, publisher, subscribeTo: ["tcp://127.0.0.1:9"], catchUpInterval: .milliseconds(200))
                let running = Task { try await consumer.run() }
                try await publisher.write(0..<7)
                try await publisher.relay.relayBatch()
                try await Self.waitUntil(.seconds(10)) { try await consumer.cursor() == 7 }
                #expect(try await Self.applied(consumerSchema).map(\.0) == Array(1...7))
                running.cancel()
                _ = try? await running.value
                await subscriber.close()
                await client.close()
                await publisher.stop()
            }
        }
    }

    @Test func concurrentRelaysNumberWithoutGapsAndConsumersApplyOnce() async throws {
        try await TestDatabase.withSchema(maxConnections: 8) { publisherSchema in
            try await TestDatabase.withSchema(maxConnections: 8) { consumerSchema in
                let publisher = try await Publisher.start(in: publisherSchema)
                let secondRelay = OutboxRelay(outbox: publisher.outbox, pool: publisher.pool, publisher: publisher.publisher, logger: testLogger())
                try await Self.prepareConsumer(consumerSchema)
                let (first, firstSub, firstClient) = try await Self.consumer(consumerSchema, publisher, catchUpInterval: .milliseconds(300))
                let (second, secondSub, secondClient) = try await Self.consumer(consumerSchema, publisher, catchUpInterval: .milliseconds(300))
                let consumers = [Task { try await first.run() }, Task { try await second.run() }]
                try await Task.sleep(for: .milliseconds(300))

                try await withThrowingTaskGroup(of: Void.self) { group in
                    for batch in 0..<20 {
                        group.addTask {
                            try await publisher.write((batch * 10)..<(batch * 10 + 10))
                            try await (batch % 2 == 0 ? publisher.relay : secondRelay).relayBatch()
                        }
                    }
                    try await group.waitForAll()
                }
                while try await publisher.relay.relayBatch() > 0 {}

                let sequences = try await publisher.pool.withConnection { db in
                    try db.query("SELECT sequence FROM \(publisherSchema.name).outbox ORDER BY sequence").map { try $0.decode(Int64.self, column: 0) }
                }
                #expect(sequences == Array(1...200))
                try await Self.waitUntil { try await first.cursor() == 200 }
                #expect(try await Self.applied(consumerSchema).map(\.0) == Array(1...200))
                for task in consumers {
                    task.cancel()
                    _ = try? await task.value
                }
                for subscriber in [firstSub, secondSub] { await subscriber.close() }
                for client in [firstClient, secondClient] { await client.close() }
                await publisher.stop()
            }
        }
    }

    @Test func eventsSinceRejectsBadInput() async throws {
        try await TestDatabase.withSchema { schema in
            let publisher = try await Publisher.start(in: schema)
            let client = try await RPCClient.connect(to: "test", endpoints: publisher.server.boundEndpoints, logger: testLogger())
            let request = Envelope(kind: .request, type: EventsSince.type(for: "test"), payload: try BusJSON.encode(EventsSince.Request(after: -1)))
            let reply = try await client.send(request)
            #expect(reply.envelope.error?.code == .invalidArgument)
            await client.close()
            await publisher.stop()
        }
    }
}
