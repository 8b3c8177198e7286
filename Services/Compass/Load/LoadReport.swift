import BusCore
import Foundation
import LoadKit

/// What `compass load` prints: for people, or as JSON for machines.
struct LoadReport {
    var mode: String
    var seconds: Int
    /// Distinct users the load was spread over.
    var users: Int
    var measured = LoadRecorder.Snapshot()
    var check: StoredCheck?
    var baselineTPS: Double?
    /// With `--via accounts`: acceptances per `accounts.accept_terms_batch` call.
    var itemsPerBatch: Double?
    /// With `--via accounts`: how long Audit took to chain the load's acts after its end.
    var drain: ConsentDrain?

    /// Acts acknowledged per second over the load and the drain after it: the rate Audit keeps up with.
    var chainedRate: Double? {
        drain.map { measured.elapsed + $0.seconds > 0 ? Double(measured.completed) / (measured.elapsed + $0.seconds) : 0 }
    }

    static let percentiles: [(String, Double)] = [("p50", 50), ("p90", 90), ("p99", 99), ("p99.9", 99.9)]

    var text: String {
        var lines = [
            "acceptances, \(mode), \(seconds) s, \(users) users",
            String(format: "  throughput   %.0f acknowledged/s (%d acknowledged, %d failed)", measured.rate, measured.completed, measured.failed),
            "  latency ms   " + Self.percentiles.map { String(format: "%@ %.2f", $0.0, measured.milliseconds($0.1)) }.joined(separator: "  ")
                + String(format: "  max %.2f", measured.maxMilliseconds),
        ]
        if !measured.errors.isEmpty {
            lines.append("  errors       " + measured.errors.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", "))
        }
        if let check {
            lines.append(
                check.missing == 0
                    ? "  stored       all \(check.checked) acknowledged writes verified in the store"
                        + (check.waited.map { " (chained within \($0))" } ?? "")
                    : "  stored       MISSING \(check.missing) of \(check.checked) acknowledged writes: \(check.examples.joined(separator: "; "))")
        }
        if let itemsPerBatch { lines.append(String(format: "  batches      %.1f acceptances per accounts.accept_terms_batch call", itemsPerBatch)) }
        if let drain, let chainedRate {
            let ratio = baselineTPS.map { String(format: " (ratio %.2f×)", chainedRate / $0) } ?? ""
            lines.append(
                drain.remaining == 0
                    ? String(
                        format: "  chained      Audit chained every act %.2f s after the last acknowledgement: %.0f/s over both",
                        drain.seconds, chainedRate) + ratio
                    : String(format: "  chained      NOT ALL: %d acts still unchained %.0f s after the load", drain.remaining, drain.seconds))
        }
        if let baselineTPS {
            lines.append(
                String(
                    format: "  baseline     pgbench -M prepared, one INSERT per commit %.0f/s; ratio %.2f×", baselineTPS, measured.rate / baselineTPS)
            )
        }
        return lines.joined(separator: "\n")
    }

    var json: String {
        var latency: [String: Double] = ["max": measured.maxMilliseconds]
        for (name, percentile) in Self.percentiles { latency[name] = measured.milliseconds(percentile) }
        var object: [String: Any] = [
            "mode": mode, "seconds": seconds, "users": users, "throughputPerSecond": measured.rate, "acknowledged": measured.completed,
            "failed": measured.failed, "errors": measured.errors, "latencyMs": latency,
        ]
        if let check {
            var stored: [String: Any] = ["checked": check.checked, "missing": check.missing, "examples": check.examples]
            if let waited = check.waited {
                stored["waitedSeconds"] = waited.inSeconds
            }
            object["stored"] = stored
        }
        if let itemsPerBatch { object["itemsPerBatch"] = itemsPerBatch }
        if let drain, let chainedRate {
            var chained: [String: Any] = ["drainSeconds": drain.seconds, "remaining": drain.remaining, "perSecond": chainedRate]
            if let baselineTPS { chained["ratio"] = chainedRate / baselineTPS }
            object["chained"] = chained
        }
        if let baselineTPS {
            object["baseline"] = ["pgbenchPerSecond": baselineTPS, "ratio": measured.rate / baselineTPS, "pgbenchMode": "prepared"]
        }
        let data = (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .prettyPrinted, .withoutEscapingSlashes])) ?? Data()
        return String(decoding: data, as: UTF8.self)
    }
}
