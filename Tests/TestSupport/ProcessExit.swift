import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// Waiting for a child without `Process.waitUntilExit()`.
///
/// A fresh-clone run hung for good with both threads of the cooperative pool (two here) blocked in
/// `waitUntilExit()`, in two `AuditHarness.stopAudit()` calls, and the two Audits they waited for
/// defunct: exited, never reaped by Foundation (why, not established; its process-manager thread
/// was idle). Whatever the cause, blocking the pool on it starved every other test. So tests wait
/// by sleeping (``Foundation/Process/exited()``), which leaves the thread to
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
        guard let state = processState(pid) else { return true }
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
