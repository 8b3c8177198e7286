import ArgumentParser
import Bus
import Foundation
import ServiceKit

/// `compass events [topic…]` follows the services' events live, one JSON line each;
/// `compass events dead-letter list|retry` shows and re-applies the events consumers parked.
struct Events: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Follow events live; list and retry dead letters.",
        subcommands: [Follow.self, DeadLetterCommand.self], defaultSubcommand: Follow.self)
}

/// `compass events [follow] [topic…]`: follows the services' events live, one JSON line each.
struct Follow: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Follow events live, one JSON line each (Ctrl-C stops).",
        discussion: """
            Topics are prefixes (`legal.` or `account.deleted`); none follows everything. Live
            events only: a missed one is still applied by its consumers through <service>.events.since.
            """)

    @Argument(help: "Topic prefixes to follow; all when none.") var topics: [String] = []
    @Option(help: "Only these services (comma-separated); all by default.") var services: String?
    @Option(help: "Exit after this many events.") var count: Int?
    @Flag(help: "Log bus details to standard error.") var verbose = false

    func run() async throws {
        let bus = try BusAccess(verbose: verbose)
        let chosen =
            try services.map { list in
                try list.split(separator: ",").map { name in
                    guard let service = ServiceName(rawValue: String(name)) else { throw ValidationError("unknown service \(name)") }
                    return service
                }
            } ?? ServiceName.allCases
        let prefixes = topics.isEmpty ? [""] : topics
        var subscribers: [(ServiceName, EventSubscriber)] = []
        for service in chosen { subscribers.append((service, try await bus.subscriber(for: service, topics: prefixes))) }
        let lines = AsyncStream<String> { continuation in
            for (service, subscriber) in subscribers {
                Task {
                    for await event in subscriber { continuation.yield(Self.line(service, event.envelope)) }
                }
            }
        }
        // On standard error, beginning `ready ` like the services' own line, for scripts that wait for it.
        FileHandle.standardError.write(Data("ready following \(chosen.map(\.rawValue).joined(separator: ","))\n".utf8))
        var seen = 0
        for await line in lines {
            ConsoleOutput.write(line + "\n")
            seen += 1
            if let count, seen >= count { break }
        }
        for (_, subscriber) in subscribers { await subscriber.close() }
    }

    static func line(_ service: ServiceName, _ envelope: Envelope) -> String {
        var object: [String: Any] = [
            "service": service.rawValue, "type": envelope.type,
            "sentAt": ISO8601DateFormatter().string(from: envelope.sentAt),
        ]
        if let sequence = envelope.sequence { object["sequence"] = sequence }
        if let payload = envelope.payload, let value = try? JSONSerialization.jsonObject(with: payload, options: [.fragmentsAllowed]) {
            object["payload"] = value
        }
        let data = (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes])) ?? Data()
        return String(decoding: data, as: UTF8.self)
    }
}
