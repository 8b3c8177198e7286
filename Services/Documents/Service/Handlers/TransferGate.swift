import Bus
import Locks

/// Bounds the chunk transfers (appends and reads) running at once, so a burst of callers cannot
/// make the service hold an unbounded number of chunks while they wait for a database connection.
/// Beyond the bound a transfer is refused at once with `unavailable` (the caller retries), which
/// also frees the chunk it carried.
final class TransferGate: Sendable {
    private let running = LockedValue(0)
    let limit: Int

    init(limit: Int) { self.limit = limit }

    func run<T: Sendable>(_ body: () async throws -> T) async throws -> T {
        let admitted = running.withLock { running in
            guard running < limit else { return false }
            running += 1
            return true
        }
        guard admitted else {
            throw BusError(.unavailable, "too many transfers in progress; try again", details: ["limit": "\(limit)"])
        }
        defer { running.withLock { $0 -= 1 } }
        return try await body()
    }
}
