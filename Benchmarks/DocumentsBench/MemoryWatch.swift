import Foundation
import Postgres
import Synchronization

/// How much each process in a transfer's path grew while it ran: Documents and SeaweedFS by their
/// exact peak (VmHWM, reset first, against the idle VmRSS), the PostgreSQL backends serving
/// Documents by their private memory (RssAnon) sampled every 50 ms: a backend's VmRSS also counts
/// the shared buffers it touched, which are the server's cache, not the backend's growth.
final class MemoryWatch: Sendable {
    struct Growth: Sendable {
        let name: String
        let idleMB: Double
        let peakMB: Double
        var growthMB: Double { peakMB - idleMB }
    }

    /// Processes measured by their own peak: (name, pid, idle VmRSS in KiB).
    private let peaked: [(String, Int32, Int)]
    /// PostgreSQL backend pid → (idle RssAnon, highest seen), in KiB.
    private let backends = Mutex<[Int32: (idle: Int, peak: Int)]>([:])
    private let pool: PostgresPool
    private let stopped = Atomic<Bool>(false)

    /// Takes the idle figures and resets the peaks; call after a warm-up, just before the transfers.
    init(processes: [(String, Int32)], pool: PostgresPool) async throws {
        var peaked: [(String, Int32, Int)] = []
        for (name, pid) in processes {
            let memory = ProcessMemory(pid: pid)
            peaked.append((name, pid, try memory.residentKB()))
            try memory.resetPeak()
        }
        self.peaked = peaked
        self.pool = pool
        try await sampleBackends()
    }

    /// Samples the backends until ``finish()``.
    func run() async {
        var refresh = ContinuousClock.now
        while !stopped.load(ordering: .relaxed) {
            if ContinuousClock.now >= refresh {
                try? await sampleBackends()
                refresh = .now + .seconds(1)
            } else {
                sampleKnownBackends()
            }
            try? await Task.sleep(for: .milliseconds(50))
        }
    }

    func finish() throws -> [Growth] {
        stopped.store(true, ordering: .relaxed)
        sampleKnownBackends()
        var growth = try peaked.map { name, pid, idle in
            Growth(name: name, idleMB: Double(idle) / 1024, peakMB: Double(try ProcessMemory(pid: pid).peakKB()) / 1024)
        }
        let worst = backends.withLock { $0.values.max { $0.peak - $0.idle < $1.peak - $1.idle } }
        if let worst {
            growth.append(Growth(name: "PostgreSQL backend (private)", idleMB: Double(worst.idle) / 1024, peakMB: Double(worst.peak) / 1024))
        }
        return growth
    }

    /// Documents' connections (application_name `documents`) in this database: new ones join with
    /// their first sample as their idle figure.
    private func sampleBackends() async throws {
        let pids = try await pool.withConnection { db in
            try db.query(
                "SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND application_name = 'documents'"
            ).map { try $0.decode(Int32.self, column: 0) }
        }
        backends.withLock { known in
            for pid in pids where known[pid] == nil {
                if let anonymous = try? ProcessMemory(pid: pid).anonymousKB() { known[pid] = (anonymous, anonymous) }
            }
        }
        sampleKnownBackends()
    }

    private func sampleKnownBackends() {
        backends.withLock { known in
            for (pid, figures) in known {
                guard let anonymous = try? ProcessMemory(pid: pid).anonymousKB() else { continue }
                known[pid] = (figures.idle, max(figures.peak, anonymous))
            }
        }
    }
}
