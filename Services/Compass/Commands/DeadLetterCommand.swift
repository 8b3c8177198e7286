import ArgumentParser
import Bus
import Contracts
import Foundation
import ServiceKit

/// `compass events dead-letter list|retry`: the events a service's consumers parked after their
/// handler kept failing (`<service>.events.dead-letters`), and applying one again once its cause
/// is fixed (`<service>.events.dead-letters.retry`). Acts as the operator.
struct DeadLetterCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "dead-letter", abstract: "List and retry events that consumers parked.", subcommands: [List.self, Retry.self])

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "One line per parked event, oldest first, per service.")
        @Option(help: "Only these services (comma-separated); all by default.") var services: String?
        @Flag(help: "Also list letters already retried.") var all = false
        @Flag(help: "Log bus details to standard error.") var verbose = false

        func run() async throws {
            let bus = try BusAccess(verbose: verbose)
            for service in try DeadLetterCommand.chosen(services) {
                let client = try await bus.client(for: service)
                defer { Task { await client.close() } }
                let letters: [DeadLetters.Letter]
                do {
                    letters = try await client.deadLetters(of: service.rawValue, includeRetried: all, principal: bus.principal)
                } catch let error as BusError where error.code == .deadlineExceeded || error.code == .unavailable {
                    throw bus.unreachable(service, error)
                }
                for letter in letters {
                    let state = letter.retriedAt.map { "retried \(ISO8601DateFormatter().string(from: $0))" } ?? "parked"
                    print(
                        """
                        \(service.rawValue) \(letter.publisher) #\(letter.sequence) \(letter.type) \(state) \
                        attempts=\(letter.attempts) parked=\(ISO8601DateFormatter().string(from: letter.parkedAt)) error=\(letter.error)
                        """)
                }
            }
        }
    }

    struct Retry: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Apply a parked event again (after fixing its cause); exit 1 when it fails again.")
        @Argument(help: "The consuming service (documents, audit, …).") var service: String
        @Argument(help: "The publisher whose event it is (accounts, legal, …).") var publisher: String
        @Argument(help: "The event's sequence number (from `list`).") var sequence: Int64
        @Flag(help: "Log bus details to standard error.") var verbose = false

        func run() async throws {
            let bus = try BusAccess(verbose: verbose)
            guard let consumer = ServiceName(rawValue: service) else { throw ValidationError("unknown service \(service)") }
            let client = try await bus.client(for: consumer)
            defer { Task { await client.close() } }
            do {
                let letter = try await client.retryDeadLetter(of: service, publisher: publisher, sequence: sequence, principal: bus.principal)
                print("applied \(service) \(letter.publisher) #\(letter.sequence) \(letter.type) after \(letter.attempts) attempts")
            } catch let error as BusError where error.code == .deadlineExceeded || error.code == .unavailable {
                throw bus.unreachable(consumer, error)
            } catch let error as BusError {
                throw CLIError("\(error.code.rawValue): \(error.message)")
            }
        }
    }

    static func chosen(_ services: String?) throws -> [ServiceName] {
        try services.map { list in
            try list.split(separator: ",").map { name in
                guard let service = ServiceName(rawValue: String(name)) else { throw ValidationError("unknown service \(name)") }
                return service
            }
        } ?? ServiceName.allCases
    }
}
