import Bus
import Contracts
import Foundation
import Locks
import Postgres
import ServiceKit
import TestSupport
import Testing

/// An event whose handler always throws: before, the consumer retried it forever and applied
/// nothing after it. Now it is retried with backoff, parked as a dead letter, counted in the
/// metrics, and the events after it are applied; an operator's retry applies it once fixed.
@Suite struct PoisonEventTests {
    typealias Happened = OutboxTests.Happened

    @Test func poisonEventIsParkedAfterItsRetriesAndTheNextEventsApply() async throws {
        let registry = MetricsBootstrap.bootstrap()
        try await TestDatabase.withSchema { publisherSchema in
            try await TestDatabase.withSchema { consumerSchema in
                let publisher = try await OutboxTests.Publisher.start(in: publisherSchema)
                try await OutboxTests.prepareConsumer(consumerSchema)
                let logger = testLogger()
                let subscriber = try await EventSubscriber.connect(endpoints: publisher.publisher.boundEndpoints, topics: [""], logger: logger)
                let client = try await RPCClient.connect(to: "test", endpoints: publisher.server.boundEndpoints, logger: logger)
                // The cause: n == 3 cannot be applied until `fixed` is set; every try is counted.
                let fixed = LockedValue(false)
                let tries = LockedValue(0)
                let name = consumerSchema.name
                let consumer = EventConsumer(
                    publisher: "test", subscriber: subscriber, client: client, pool: consumerSchema.pool, schema: name,
                    catchUpInterval: .milliseconds(500), poison: PoisonPolicy(attempts: 4, firstDelay: .milliseconds(50)), logger: logger
                ) { event, db in
                    let happened = try event.decodePayload(Happened.self)
                    if happened.n == 3 && !fixed.withLock({ $0 }) {
                        tries.withLock { $0 += 1 }
                        throw TestSupportError("cannot apply n = 3")
                    }
                    try db.execute("INSERT INTO \(name).applied (sequence, n) VALUES ($1, $2)", event.sequence!, happened.n)
                }
                // The operator's bus methods on a server of the consuming service.
                let server = RPCServer(name: "consumer", endpoints: ["tcp://127.0.0.1:*"], logger: logger)
                DeadLettersHandler.register(service: name, pool: consumerSchema.pool, consumer: { $0 == "test" ? consumer : nil }, on: server)
                try await server.start()
                let operatorClient = try await RPCClient.connect(to: "consumer", endpoints: server.boundEndpoints, logger: logger)

                let running = Task { try await consumer.run() }
                for n in 1...5 { try await publisher.write([n]) }
                while try await publisher.relay.relayBatch() > 0 {}
                try await OutboxTests.waitUntil { try await consumer.cursor() == 5 }

                #expect(try await OutboxTests.applied(consumerSchema).map(\.1) == [1, 2, 4, 5])
                #expect(tries.withLock { $0 } == 4)
                let letters = try await operatorClient.deadLetters(of: name, principal: .operator("tests"))
                #expect(letters.count == 1)
                let letter = try #require(letters.first)
                #expect(letter.publisher == "test" && letter.sequence == 3 && letter.type == "test.happened" && letter.attempts == 4)
                #expect(letter.error.contains("cannot apply n = 3") && letter.retriedAt == nil)
                let exposition = MetricsBootstrap.exposition(of: registry)
                let counted = exposition.split(separator: "\n").filter {
                    $0.hasPrefix("events_dead_lettered_total{") && $0.contains(#"publisher="test""#) && $0.contains(#"type="test.happened""#)
                }
                #expect(counted.count == 1 && counted.first?.hasSuffix(" 1") == true, "\(counted)")

                // Not for anyone but operators; a retry while the cause remains fails and changes nothing.
                let refused = await #expect(throws: BusError.self) {
                    _ = try await operatorClient.deadLetters(of: name, principal: .service("gateway"))
                }
                #expect(refused?.code == .forbidden)
                let again = await #expect(throws: BusError.self) {
                    _ = try await operatorClient.retryDeadLetter(of: name, publisher: "test", sequence: 3, principal: .operator("tests"))
                }
                #expect(again?.code == .conflict)
                #expect(try await OutboxTests.applied(consumerSchema).map(\.1) == [1, 2, 4, 5])

                // Cause fixed: the retry applies it (once) and marks the letter.
                fixed.withLock { $0 = true }
                let retried = try await operatorClient.retryDeadLetter(of: name, publisher: "test", sequence: 3, principal: .operator("tests"))
                #expect(retried.retriedAt != nil && retried.attempts == 6)
                #expect(try await OutboxTests.applied(consumerSchema).map(\.1) == [1, 2, 3, 4, 5])
                #expect(try await operatorClient.deadLetters(of: name, principal: .operator("tests")).isEmpty)
                #expect(try await operatorClient.deadLetters(of: name, includeRetried: true, principal: .operator("tests")).count == 1)
                let twice = await #expect(throws: BusError.self) {
                    _ = try await operatorClient.retryDeadLetter(of: name, publisher: "test", sequence: 3, principal: .operator("tests"))
                }
                #expect(twice?.code == .conflict)

                // And the consumer carries on with the next events.
                try await publisher.write([6])
                while try await publisher.relay.relayBatch() > 0 {}
                try await OutboxTests.waitUntil { try await consumer.cursor() == 6 }
                #expect(try await OutboxTests.applied(consumerSchema).map(\.1) == [1, 2, 3, 4, 5, 6])

                running.cancel()
                _ = try? await running.value
                await operatorClient.close()
                await server.shutdown()
                await subscriber.close()
                await client.close()
                await publisher.stop()
            }
        }
    }

    /// A database that is down (or read-only, or timing out) says nothing about the event: however
    /// long it lasts, those failures never count towards parking.
    @Test func transientDatabaseErrorsNeverParkAnEvent() async throws {
        try await TestDatabase.withSchema { publisherSchema in
            try await TestDatabase.withSchema { consumerSchema in
                let publisher = try await OutboxTests.Publisher.start(in: publisherSchema)
                try await OutboxTests.prepareConsumer(consumerSchema)
                let logger = testLogger()
                let subscriber = try await EventSubscriber.connect(endpoints: publisher.publisher.boundEndpoints, topics: [""], logger: logger)
                let client = try await RPCClient.connect(to: "test", endpoints: publisher.server.boundEndpoints, logger: logger)
                let outage = LockedValue(6)  // failures left, three times the tries allowed
                let name = consumerSchema.name
                let consumer = EventConsumer(
                    publisher: "test", subscriber: subscriber, client: client, pool: consumerSchema.pool, schema: name,
                    catchUpInterval: .milliseconds(100), poison: PoisonPolicy(attempts: 2, firstDelay: .milliseconds(10)), logger: logger
                ) { event, db in
                    let happened = try event.decodePayload(Happened.self)
                    if happened.n == 2,
                        outage.withLock({ left in
                            defer { left -= 1 }
                            return left > 0
                        })
                    {
                        throw PostgresError(kind: .server, operation: "PQexecParams", message: "the database is read-only", sqlState: "25006")
                    }
                    try db.execute("INSERT INTO \(name).applied (sequence, n) VALUES ($1, $2)", event.sequence!, happened.n)
                }
                let running = Task { try await consumer.run() }
                for n in 1...3 { try await publisher.write([n]) }
                while try await publisher.relay.relayBatch() > 0 {}
                try await OutboxTests.waitUntil { try await consumer.cursor() == 3 }
                #expect(try await OutboxTests.applied(consumerSchema).map(\.1) == [1, 2, 3])
                #expect(outage.withLock { $0 } <= 0)
                #expect(try await EventConsumer.deadLetters(in: name, pool: consumerSchema.pool, includeRetried: true).isEmpty)
                running.cancel()
                _ = try? await running.value
                await subscriber.close()
                await client.close()
                await publisher.stop()
            }
        }
    }
}
