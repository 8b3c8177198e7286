/// A configuration value that could not be used, naming the variable and what it should have been.
///
/// The message is meant for an operator reading the log of a service that refused to start:
/// `HEALTH_PORT="http" is invalid: expected an integer in 0...65535`. The value of a secret variable
/// is never repeated in the message.
public struct ConfigurationError: Error, CustomStringConvertible, Sendable, Equatable {
    /// The environment variable, e.g. `HEALTH_PORT`.
    public let variable: String
    /// The offending value, or `nil` when the variable is secret and must not be echoed.
    public let value: String?
    /// What a valid value looks like, e.g. `an integer in 0...65535`.
    public let expected: String
    /// The variable is required and was not set (rather than set to a bad value).
    public private(set) var isMissing = false

    public init(variable: String, value: String?, expected: String) {
        self.variable = variable
        self.value = value
        self.expected = expected
    }

    public var description: String {
        if isMissing { return "\(variable) is not set: expected \(expected)" }
        let shown = value.map { "\"\($0)\"" } ?? "<redacted>"
        return "\(variable)=\(shown) is invalid: expected \(expected)"
    }

    /// A variable that must be set and is not (or is empty).
    public static func missing(_ variable: String, expected: String) -> ConfigurationError {
        var error = ConfigurationError(variable: variable, value: nil, expected: expected)
        error.isMissing = true
        return error
    }
}
