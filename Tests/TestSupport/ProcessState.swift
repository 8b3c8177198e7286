import Foundation

/// Waits (up to 5 s) until the kernel reports `pid` stopped (state `T` in /proc): SIGSTOP is
/// delivered asynchronously, and a request sent in between could still be answered.
public func waitUntilStopped(_ pid: Int32) async throws {
    try await withTimeout(.seconds(5), "process \(pid) to stop") {
        while true {
            let stat = try String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8)
            // The state follows the command name, which is in parentheses and may hold spaces.
            if let close = stat.lastIndex(of: ")"), stat[stat.index(close, offsetBy: 2)] == "T" { return }
            try await Task.sleep(for: .milliseconds(5))
        }
    }
}
