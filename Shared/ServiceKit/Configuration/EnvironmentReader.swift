import Foundation
import Locks

/// Reads typed configuration from environment variables and remembers every variable it was asked
/// for, so the same code that configures a service also documents it.
///
/// Each read names the variable, its default and a one-line description:
///
/// ```swift
/// let environment = EnvironmentReader()
/// let port = try environment.int("HEALTH_PORT", default: 8081, "Port of /healthz, /readyz and /metrics.")
/// let database = try environment.secret("DATABASE_URL", default: "", "libpq connection string.")
/// print(environment.variables.markdownTable())
/// ```
///
/// An unset or empty variable yields the default. A value that does not parse throws a
/// ``ConfigurationError`` naming the variable and what was expected: a service refuses to start
/// rather than run with a half-understood configuration.
public final class EnvironmentReader: Sendable {
    private let values: [String: String]
    private let recorded = LockedValue<[EnvironmentVariable]>([])

    /// - Parameter values: the environment to read; tests pass their own dictionary.
    public init(_ values: [String: String] = ProcessInfo.processInfo.environment) {
        self.values = values
    }

    /// Every variable read so far, in first-read order, without duplicates.
    public var variables: [EnvironmentVariable] {
        recorded.withLock { $0 }
    }

    /// Records a variable without reading it: for variables read elsewhere (e.g. by a C library).
    public func declare(_ name: String, default defaultValue: String, secret: Bool = false, _ summary: String) {
        let shownDefault = secret && !defaultValue.isEmpty ? "<redacted>" : defaultValue
        let variable = EnvironmentVariable(name: name, defaultValue: shownDefault, isSecret: secret, summary: summary)
        recorded.withLock { list in
            if !list.contains(where: { $0.name == name }) { list.append(variable) }
        }
    }

    /// Declares the variable, then parses its value (if set and not empty) or returns the default.
    func read<Value>(
        _ name: String, default defaultValue: Value, shownAs defaultText: String, secret: Bool = false,
        _ summary: String, expected: String, parse: (String) -> Value?
    ) throws(ConfigurationError) -> Value {
        declare(name, default: defaultText, secret: secret, summary)
        guard let raw = values[name], !raw.trimmingCharacters(in: .whitespaces).isEmpty else { return defaultValue }
        guard let value = parse(raw.trimmingCharacters(in: .whitespaces)) else {
            throw ConfigurationError(variable: name, value: secret ? nil : raw, expected: expected)
        }
        return value
    }
}
