import Foundation

/// Waits (up to 5 s) until the kernel reports `pid` stopped (state `T` in /proc): SIGSTOP is
/// delivered asynchronously, and a request sent in between could still be answered.
public func waitUntilStopped(_ pid: Int32) async throws {
    try await withTimeout(.seconds(5), "process \(pid) to stop") {
        while true {
            guard let state = processState(pid) else { throw TestSupportError("process \(pid) is gone") }
            if state == "T" { return }
            try await Task.sleep(for: .milliseconds(5))
        }
    }
}

/// The kernel's one-letter state of `pid` (`R`, `S`, `T`, `Z`, ...) from /proc; nil once it is gone.
public func processState(_ pid: Int32) -> Character? {
    // The state follows the command name, which is in parentheses and may hold spaces.
    guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8), let close = stat.lastIndex(of: ")"),
        let at = stat.index(close, offsetBy: 2, limitedBy: stat.index(before: stat.endIndex))
    else { return nil }
    return stat[at]
}
