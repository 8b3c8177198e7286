import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// Waiting for a child without `Process.waitUntilExit()`.
///
/// Foundation reaps its children from a handler on a global dispatch queue whose threads, on
/// Linux, are the cooperative pool's (two here). A test that blocks a pool thread in
/// `waitUntilExit()` waits for a reap that needs a pool thread: with both threads blocked so, the
/// children stay zombies and the whole test process hangs. That happened: a fresh-clone run stopped
/// for good with two `AuditHarness.stopAudit()` calls in `waitUntilExit()` and their two Audits
/// defunct. So tests wait by sleeping (``Foundation/Process/exited()``), which leaves the thread to
/// the reaper, or, after a SIGKILL, by asking the kernel (``ChildExit/waitUntilDead(_:within:)``).
extension Process {
    /// Returns once the process has exited and been reaped, sleeping between looks instead of
    /// blocking a thread; `terminationStatus` may be read afterwards.
    public func exited() async {
        while isRunning {
            if (try? await Task.sleep(for: .milliseconds(5))) == nil { await Task.yield() }
        }
    }
}

public enum ChildExit {
    /// Whether the kernel has ended process `pid`: it is gone, or a zombie (not yet reaped) with
    /// no file open. The open files count too: a multithreaded process's first thread shows `Z`
    /// while its other threads are still exiting, and its sockets close only with the last one
    /// (seen: a killed SeaweedFS still accepted a connection, then dropped it).
    public static func isDead(_ pid: Int32) -> Bool {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
            let close = stat.lastIndex(of: ")"), stat.index(close, offsetBy: 2, limitedBy: stat.endIndex) != nil
        else { return true }
        let state = stat[stat.index(close, offsetBy: 2)]
        guard state == "Z" || state == "X" || state == "x" else { return false }
        let open = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/fd")) ?? []
        return open.isEmpty
    }

    /// Blocks until `process` is dead by the kernel's account (after a SIGKILL: milliseconds),
    /// without waiting for Foundation's reap; at most `within`.
    public static func waitUntilDead(_ process: Process, within: Duration = .seconds(10)) {
        let end = ContinuousClock.now + within
        while process.isRunning, !isDead(process.processIdentifier), ContinuousClock.now < end { usleep(1000) }
    }
}
