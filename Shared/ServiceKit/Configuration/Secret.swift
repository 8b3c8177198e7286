/// A configuration value that must never appear in logs: passwords, keys, URLs with credentials.
///
/// Every textual representation (`description`, `debugDescription`, `dump`, string interpolation
/// and `Logger.MetadataValue.stringConvertible`) shows `<redacted>`; the value itself is only reached
/// through the explicitly named ``revealed``, so a leak stands out in review.
public struct Secret<Value: Sendable>: Sendable, CustomStringConvertible, CustomDebugStringConvertible,
    CustomReflectable
{
    /// The wrapped value. Read it only where it is used (a connection string, a key).
    public let revealed: Value

    public init(_ value: Value) {
        self.revealed = value
    }

    public var description: String { "<redacted>" }
    public var debugDescription: String { "Secret(<redacted>)" }
    public var customMirror: Mirror { Mirror(self, children: [], displayStyle: .struct) }

    /// Transforms the hidden value without revealing it, e.g. parsing a secret URL.
    public func map<Other>(_ transform: (Value) throws -> Other) rethrows -> Secret<Other> {
        Secret<Other>(try transform(revealed))
    }
}

extension Secret: Equatable where Value: Equatable {}
