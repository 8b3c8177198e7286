/// A test step took longer than it may.
public struct TestTimeout: Error, CustomStringConvertible {
    public let what: String
    public let limit: Duration
    public var description: String { "\(what) did not finish within \(limit)" }
}

/// Runs `body`, failing with ``TestTimeout`` if it takes longer than `limit`: no test waits
/// without a bound (a hung test would hold the shared cluster gate and stall every other one).
public func withTimeout<T: Sendable>(
    _ limit: Duration, _ what: String = "step", _ body: @escaping @Sendable () async throws -> T
) async throws -> T {
    try await withThrowingTaskGroup(of: T?.self) { group in
        group.addTask { try await body() }
        group.addTask {
            try await Task.sleep(for: limit)
            return nil
        }
        defer { group.cancelAll() }
        guard let first = try await group.next(), let value = first else { throw TestTimeout(what: what, limit: limit) }
        return value
    }
}
