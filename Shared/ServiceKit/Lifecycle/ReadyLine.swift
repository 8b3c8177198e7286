import Foundation
import Logging

extension ServiceRuntime {
    /// Tells a supervisor or test that the process is serving, on standard output, in the log
    /// format the process was given: `ready http=8080 health=5750` in text, and in JSON one log
    /// object whose `message` is `ready` with the same fields, so a strict log collector reading a
    /// `LOG_FORMAT=json` process meets JSON lines only.
    ///
    /// Written whatever `LOG_LEVEL` says: the line is the process's start-up handshake, not a log
    /// event a level may filter.
    public func announceReady(_ fields: KeyValuePairs<String, Int>) {
        switch configuration.logFormat {
        case .text:
            let pairs = fields.map { "\($0.key)=\($0.value)" }.joined(separator: " ")
            FileHandle.standardOutput.write(Data("ready \(pairs)\n".utf8))
        case .json:
            let handler = JSONLogHandler(label: "\(identity.name).lifecycle", service: identity.name, logLevel: .trace)
            var metadata: Logger.Metadata = [:]
            for (key, value) in fields { metadata[key] = .stringConvertible(value) }
            Logger(label: "\(identity.name).lifecycle") { _ in handler }.info("ready", metadata: metadata)
        }
    }
}
