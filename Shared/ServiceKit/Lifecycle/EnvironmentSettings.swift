/// A service's own settings, read from the environment by one initializer, so `--help-env` can list
/// them without starting anything: it runs the initializer over an empty environment and prints
/// every variable it read.
public protocol EnvironmentSettings: Sendable {
    init(environment: EnvironmentReader) throws
}

/// For a service with no settings beyond ``CommonConfiguration``.
public struct NoSettings: EnvironmentSettings {
    public init(environment: EnvironmentReader) {}
}
