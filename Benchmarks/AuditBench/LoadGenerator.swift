import Bus
import Contracts
import Foundation
import Histogram

/// What one load phase measured.
struct PhaseResult {
    var label: String
    var completed: Int
    var failed: Int
    var seconds: Double
    var latency: Histogram<UInt64>
    var rate: Double { Double(completed) / seconds }
    /// Latency percentile in milliseconds (the histogram holds microseconds).
    func milliseconds(_ percentile: Double) -> Double { Double(latency.valueAtPercentile(percentile)) / 1000 }
}

/// Sends `audit.record` calls over the bus: closed-loop (a fixed number in flight) or open-loop
/// (a fixed arrival rate, latency measured from each call's scheduled time, so a stall is not
/// hidden by the calls it delays).
struct LoadGenerator: Sendable {
    let clients: [RPCClient]
    let version: String
    let users: [UUID]

    private func call(_ index: Int, client: RPCClient) async -> Bool {
        let request = AuditRecord.Request(
            userId: users[index % users.count], documentType: .termsOfService, version: version, action: .accept,
            clientIP: "203.0.113.7", userAgent: "audit-bench")
        do {
            _ = try await client.call(AuditRecord.self, request, idempotencyKey: MessageID.text(of: MessageID.make()), timeout: .seconds(30))
            return true
        } catch { return false }
    }

    static func histogram() -> Histogram<UInt64> {
        Histogram(lowestDiscernibleValue: 1, highestTrackableValue: 60_000_000, numberOfSignificantValueDigits: .three)
    }

    /// `inFlight` calls outstanding at all times for `duration`.
    func closedLoop(inFlight: Int, for duration: Duration, label: String) async -> PhaseResult {
        let clock = ContinuousClock()
        let end = clock.now + duration
        let start = clock.now
        let results = await withTaskGroup(of: (Int, Int, Histogram<UInt64>).self) { group in
            for worker in 0..<inFlight {
                let client = clients[worker % clients.count]
                group.addTask {
                    var histogram = Self.histogram()
                    var (done, failed, index) = (0, 0, worker * 1_000_003)
                    while clock.now < end {
                        let sent = clock.now
                        let ok = await call(index, client: client)
                        index += 1
                        if ok { done += 1 } else { failed += 1 }
                        _ = histogram.record(UInt64(max(1, (clock.now - sent).inMicroseconds)))
                    }
                    return (done, failed, histogram)
                }
            }
            var total = (0, 0, Self.histogram())
            for await (done, failed, histogram) in group {
                total.0 += done
                total.1 += failed
                total.2.add(histogram)
            }
            return total
        }
        return PhaseResult(
            label: label, completed: results.0, failed: results.1, seconds: (clock.now - start).inSeconds, latency: results.2)
    }

    /// Calls arriving at `rate` per second for `duration`, each on its own task.
    func openLoop(rate: Double, for duration: Duration, label: String) async -> PhaseResult {
        let clock = ContinuousClock()
        let start = clock.now
        let total = Int(rate * duration.inSeconds)
        let interval = Duration.seconds(1 / rate)
        let results = await withTaskGroup(of: (Bool, UInt64).self) { group in
            var next = 0
            // Launch in 1 ms ticks: every call due by now, each stamped with its scheduled time.
            while next < total {
                let now = clock.now
                while next < total, start + interval * next <= now {
                    let scheduled = start + interval * next
                    let client = clients[next % clients.count]
                    let index = next
                    group.addTask {
                        let ok = await call(index, client: client)
                        return (ok, UInt64(max(1, (clock.now - scheduled).inMicroseconds)))
                    }
                    next += 1
                }
                try? await Task.sleep(for: .milliseconds(1))
            }
            var histogram = Self.histogram()
            var (done, failed) = (0, 0)
            for await (ok, latency) in group {
                if ok { done += 1 } else { failed += 1 }
                _ = histogram.record(latency)
            }
            return (done, failed, histogram)
        }
        return PhaseResult(
            label: label, completed: results.0, failed: results.1, seconds: duration.inSeconds, latency: results.2)
    }
}

extension Duration {
    var inMicroseconds: Int64 { components.seconds * 1_000_000 + components.attoseconds / 1_000_000_000_000 }
}
