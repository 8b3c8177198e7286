import Bus
import Foundation
import Histogram
import Locks

/// What a load run measured so far: completions, failures by error code, and a latency histogram
/// in microseconds. Shared by every task of a run (one lock per completion, cheap next to a bus
/// round trip), so a progress line can read it while the run goes on.
public final class LoadRecorder: Sendable {
    public struct Snapshot: Sendable {
        public var completed = 0
        public var failed = 0
        public var errors: [String: Int] = [:]
        public var latency = LoadRecorder.histogram()
        public var elapsed: Double = 0

        public init() {}

        public var rate: Double { elapsed > 0 ? Double(completed) / elapsed : 0 }
        /// Latency percentile in milliseconds.
        public func milliseconds(_ percentile: Double) -> Double {
            completed + failed == 0 ? 0 : Double(latency.valueAtPercentile(percentile)) / 1000
        }
        public var maxMilliseconds: Double { Double(latency.max) / 1000 }
    }

    private let state = LockedValue(Snapshot())
    private let started = ContinuousClock.now

    public init() {}

    public static func histogram() -> Histogram<UInt64> {
        Histogram(lowestDiscernibleValue: 1, highestTrackableValue: 60_000_000, numberOfSignificantValueDigits: .three)
    }

    /// One call finished after `latency`; `error` is its error code, nil on success.
    public func record(latency: Duration, error: String?) {
        let micros = UInt64(max(1, latency.inMicroseconds))
        state.withLock { state in
            _ = state.latency.record(micros)
            if let error {
                state.failed += 1
                state.errors[error, default: 0] += 1
            } else {
                state.completed += 1
            }
        }
    }

    public var snapshot: Snapshot {
        var snapshot = state.withLock { $0 }
        snapshot.elapsed = (ContinuousClock.now - started).inSeconds
        return snapshot
    }
}

/// The median of some measurements (0 for none).
public func median(_ values: [Double]) -> Double {
    guard !values.isEmpty else { return 0 }
    let sorted = values.sorted()
    return sorted.count % 2 == 1 ? sorted[sorted.count / 2] : (sorted[sorted.count / 2 - 1] + sorted[sorted.count / 2]) / 2
}
