import Foundation
import Logging
import ServiceLifecycle

extension ServiceRuntime {
    /// Tells a supervisor or test that the process is serving, on standard output, in the log
    /// format the process was given: `ready http=8080 health=5750` in text, and in JSON one log
    /// object whose `message` is `ready` with the same fields, so a strict log collector reading a
    /// `LOG_FORMAT=json` process meets JSON lines only. `health` (the health server's port) is
    /// added once that server listens: this waits for it.
    ///
    /// Written whatever `LOG_LEVEL` says: the line is the process's start-up handshake, not a log
    /// event a level may filter.
    public func announceReady(_ fields: KeyValuePairs<String, Int> = [:]) async throws {
        let all = fields.map { ($0.key, $0.value) } + [("health", try await healthPort())]
        switch configuration.logFormat {
        case .text:
            let pairs = all.map { "\($0.0)=\($0.1)" }.joined(separator: " ")
            FileHandle.standardOutput.write(Data("ready \(pairs)\n".utf8))
        case .json:
            let handler = JSONLogHandler(label: "\(identity.name).lifecycle", service: identity.name, logLevel: .trace)
            var metadata: Logger.Metadata = [:]
            for (key, value) in all { metadata[key] = .stringConvertible(value) }
            Logger(label: "\(identity.name).lifecycle") { _ in handler }.info("ready", metadata: metadata)
        }
    }

    /// Adds the service that prints the ready line (``announceReady(_:)``) once the group runs and
    /// the health server listens: for a process whose handlers are in place when `configure` returns.
    public func announceReadyOnceServing() {
        addService(
            .init(
                service: ReadyAnnouncement(runtime: self), successTerminationBehavior: .ignore,
                failureTerminationBehavior: .gracefullyShutdownGroup))
    }
}

/// Prints the ready line, then has nothing more to do.
struct ReadyAnnouncement: Service {
    let runtime: ServiceRuntime

    func run() async throws {
        try await runtime.announceReady()
    }
}
