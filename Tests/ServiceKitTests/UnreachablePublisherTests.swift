import Bus
import Foundation
import Locks
import Logging
import Postgres
import ServiceKit
import TestSupport
import Testing

/// A consumer whose publisher is not there yet (containers start in any order, and a publisher
/// restarts): its failed catch-ups are counted, the first two logged at debug (a restart costs
/// that much while the sockets reconnect) and the third on as warnings; once the publisher is up
/// the consumer catches up and says so.
@Suite struct UnreachablePublisherTests {
    @Test func failuresAreCountedAndWarnedOnlyOnceTheyPersist() async throws {
        let registry = MetricsBootstrap.bootstrap()
        try await TestDatabase.withSchema { publisherSchema in
            try await TestDatabase.withSchema { consumerSchema in
                try await OutboxTests.prepareConsumer(consumerSchema)
                let (events, rpc) = (ipcEndpoint(), ipcEndpoint())
                let service = "late\(UInt32.random(in: 0...UInt32.max))"
                let logs = CapturedLogs()
                let logger = logs.logger(label: "consumer")
                let subscriber = try await EventSubscriber.connect(endpoints: [events], topics: [""], logger: logger)
                var options = RPCClientOptions()
                options.defaultTimeout = .milliseconds(200)
                let client = try await RPCClient.connect(to: service, endpoints: [rpc], options: options, logger: logger)
                let name = consumerSchema.name
                let consumer = EventConsumer(
                    publisher: service, subscriber: subscriber, client: client, pool: consumerSchema.pool, schema: name,
                    catchUpInterval: .milliseconds(100), logger: logger
                ) { event, db in
                    let happened = try event.decodePayload(OutboxTests.Happened.self)
                    try db.execute("INSERT INTO \(name).applied (sequence, n) VALUES ($1, $2)", event.sequence!, happened.n)
                }
                let running = Task { try await consumer.run() }

                try await OutboxTests.waitUntil { logs.levels(of: "event consumer: failed, will catch up").count >= 4 }
                let levels = logs.levels(of: "event consumer: failed, will catch up")
                #expect(Array(levels.prefix(4)) == [.debug, .debug, .warning, .warning], "\(levels)")
                let counted = MetricsBootstrap.exposition(of: registry).split(separator: "\n").first {
                    $0.hasPrefix("events_consumer_failures_total{") && $0.contains(#"publisher="\#(service)""#)
                }
                let count = counted.flatMap { Int($0.split(separator: " ").last ?? "") } ?? 0
                #expect(count >= levels.count, "\(String(describing: counted)) for \(levels.count) logged failures")
                #expect(logs.levels(of: "event consumer: caught up again").isEmpty)

                // The publisher comes up where the consumer looks: it catches up, and says so once.
                let publisher = try await OutboxTests.Publisher.start(in: publisherSchema, service: service, events: events, rpc: rpc)
                try await publisher.write([1, 2])
                while try await publisher.relay.relayBatch() > 0 {}
                try await OutboxTests.waitUntil { try await consumer.cursor() == 2 }
                #expect(try await OutboxTests.applied(consumerSchema).map(\.1) == [1, 2])
                try await OutboxTests.waitUntil { logs.levels(of: "event consumer: caught up again") == [.info] }

                running.cancel()
                _ = try? await running.value
                await subscriber.close()
                await client.close()
                await publisher.stop()
            }
        }
    }
}

/// Every log entry's level and message, for tests that check what an operator would read.
final class CapturedLogs: Sendable {
    private let entries = LockedValue<[(level: Logger.Level, message: String)]>([])

    func logger(label: String) -> Logger {
        var logger = Logger(label: label) { _ in Handler(logs: self) }
        logger.logLevel = .trace
        return logger
    }

    /// The levels the entries with this message were logged at, oldest first.
    func levels(of message: String) -> [Logger.Level] {
        entries.withLock { $0.filter { $0.message == message }.map(\.level) }
    }

    private struct Handler: LogHandler {
        let logs: CapturedLogs
        var metadata: Logger.Metadata = [:]
        var logLevel: Logger.Level = .trace

        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }

        func log(event: LogEvent) {
            logs.entries.withLock { $0.append((event.level, event.message.description)) }
        }
    }
}
