import BusCore

/// The outcome of one item of a batch call: its value, or the error that item alone met. A batch
/// call answers every item, in the order asked; one bad item never fails its neighbours.
public struct ItemOutcome<Value: Codable & Sendable & Equatable>: Codable, Sendable, Equatable {
    public var value: Value?
    public var error: BusError?

    public init(value: Value) {
        self.value = value
        self.error = nil
    }

    public init(error: BusError) {
        self.value = nil
        self.error = error
    }

    public init(_ result: Result<Value, BusError>) {
        switch result {
        case .success(let value): self.init(value: value)
        case .failure(let error): self.init(error: error)
        }
    }

    /// The value, or the item's error thrown (`internal` for an outcome that carries neither).
    public func get() throws -> Value {
        if let value { return value }
        throw error ?? BusError(.internal, "a batch item came back with neither a value nor an error")
    }
}
