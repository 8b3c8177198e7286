import Bus
import Foundation

/// Drives an operation under load: closed-loop (a fixed number in flight) or open-loop (a fixed
/// arrival rate, latency measured from each call's scheduled time, so a stall is not hidden by
/// the calls it delays: no coordinated omission).
///
/// The operation gets the call's index and returns nil on success or the error code.
public struct LoadDriver: Sendable {
    public typealias Operation = @Sendable (Int) async -> String?
    let operation: Operation

    public init(_ operation: @escaping Operation) { self.operation = operation }

    /// `concurrency` calls outstanding at all times for `duration`.
    public func closedLoop(concurrency: Int, for duration: Duration, into recorder: LoadRecorder = LoadRecorder()) async -> LoadRecorder.Snapshot {
        let clock = ContinuousClock()
        let end = clock.now + duration
        await withTaskGroup(of: Void.self) { group in
            for worker in 0..<concurrency {
                group.addTask {
                    var index = worker * 1_000_003
                    while clock.now < end {
                        let sent = clock.now
                        let error = await operation(index)
                        index += 1
                        recorder.record(latency: clock.now - sent, error: error)
                    }
                }
            }
        }
        return recorder.snapshot
    }

    /// Calls arriving at `rate` per second for `duration`, each on its own task.
    public func openLoop(rate: Double, for duration: Duration, into recorder: LoadRecorder = LoadRecorder()) async -> LoadRecorder.Snapshot {
        let clock = ContinuousClock()
        let start = clock.now
        let total = Int(rate * duration.inSeconds)
        let interval = Duration.seconds(1 / rate)
        await withTaskGroup(of: Void.self) { group in
            var next = 0
            // Launch in 1 ms ticks: every call due by now, each stamped with its scheduled time.
            while next < total {
                let now = clock.now
                while next < total, start + interval * next <= now {
                    let scheduled = start + interval * next
                    let index = next
                    group.addTask {
                        let error = await operation(index)
                        recorder.record(latency: clock.now - scheduled, error: error)
                    }
                    next += 1
                }
                try? await Task.sleep(for: .milliseconds(1))
            }
        }
        var snapshot = recorder.snapshot
        snapshot.elapsed = duration.inSeconds
        return snapshot
    }
}
