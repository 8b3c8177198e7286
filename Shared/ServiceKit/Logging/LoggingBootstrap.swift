import Locks
import Logging

/// Installs ServiceKit's log handlers as swift-log's backend, once per process.
///
/// swift-log allows exactly one `LoggingSystem.bootstrap` per process (a second one traps). The
/// bootstrap here installs a factory that reads the current ``LoggingBootstrap/Settings`` under a
/// lock, so calling ``bootstrap(service:format:level:output:)`` again (a second test, a service
/// re-reading its config) changes the settings of loggers made afterwards instead of crashing.
/// Existing `Logger` values keep the handler they were made with.
public enum LoggingBootstrap {
    /// What the installed factory builds handlers from.
    public struct Settings: Sendable {
        public var service: String
        public var format: LogFormat
        public var level: Logger.Level
        public var output: LogOutput

        public init(service: String, format: LogFormat, level: Logger.Level, output: LogOutput = .standardOutput) {
            self.service = service
            self.format = format
            self.level = level
            self.output = output
        }
    }

    /// `nil` until the first bootstrap; afterwards the settings handlers are made from.
    private static let current = LockedValue<Settings?>(nil)

    /// Makes every `Logger(label:)` created from now on use `settings`.
    public static func bootstrap(_ settings: Settings) {
        let isFirst = current.withLock { current in
            defer { current = settings }
            return current == nil
        }
        if isFirst {
            LoggingSystem.bootstrap { label in makeHandler(label: label) }
        }
    }

    /// Convenience for ``bootstrap(_:)``.
    public static func bootstrap(
        service: String, format: LogFormat, level: Logger.Level, output: LogOutput = .standardOutput
    ) {
        bootstrap(Settings(service: service, format: format, level: level, output: output))
    }

    /// A handler for `label` with the current settings (standard-output text at `info` before any bootstrap).
    public static func makeHandler(label: String) -> any LogHandler {
        let settings = current.withLock { $0 } ?? Settings(service: label, format: .text, level: .info)
        switch settings.format {
        case .json:
            return JSONLogHandler(
                label: label, service: settings.service, logLevel: settings.level, output: settings.output)
        case .text:
            return TextLogHandler(label: label, logLevel: settings.level, output: settings.output)
        }
    }
}
