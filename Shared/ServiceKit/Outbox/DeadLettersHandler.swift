import Bus
import Contracts
import Foundation
import Postgres

/// Answers `<service>.events.dead-letters` (list) and `<service>.events.dead-letters.retry` for
/// operators: every service registers both, since every service has the table; retry goes to the
/// running consumer of the letter's publisher, which applies it with its own handler.
public enum DeadLettersHandler {
    public static func register(
        service: String, pool: PostgresPool, consumer: @escaping @Sendable (String) -> EventConsumer?, on server: RPCServer
    ) {
        server.registerRaw(DeadLetters.listType(for: service)) { envelope, context in
            try requireOperator(context)
            let request = try envelope.decodePayload(DeadLetters.ListRequest.self)
            let letters = try await EventConsumer.deadLetters(in: service, pool: pool, includeRetried: request.includeRetried)
            return (try BusJSON.encode(DeadLetters.ListReply(letters: letters)), [])
        }
        server.registerRaw(DeadLetters.retryType(for: service)) { envelope, context in
            try requireOperator(context)
            let request = try envelope.decodePayload(DeadLetters.RetryRequest.self)
            guard let consumer = consumer(request.publisher) else {
                throw BusError(.notFound, "\(service) consumes no events from \(request.publisher)")
            }
            let letter = try await consumer.retryDeadLetter(sequence: request.sequence)
            return (try BusJSON.encode(DeadLetters.RetryReply(letter: letter)), [])
        }
    }

    private static func requireOperator(_ context: BusRequestContext) throws {
        guard context.principal.kind == .operator else { throw BusError(.forbidden, "dead letters are for operators") }
    }
}
