import Foundation

/// Drops every packet to and from a TCP port on loopback with iptables, as a peer that vanished
/// from the network: no RST, no FIN, so only timeouts and heartbeats can tell. Needs root.
public enum LoopbackBlackHole {
    /// Whether this process can change iptables' rules (root, with iptables installed).
    public static func isAvailable() async -> Bool {
        guard getuid() == 0 else { return false }
        return (try? await iptables(["-L", "INPUT", "-n"])) != nil
    }

    /// Starts dropping `port`'s packets; returns what lifts it (call it once, even after a failure).
    public static func drop(port: String) async throws -> @Sendable () async throws -> Void {
        // Loopback packets pass INPUT once each way: dropping both ports there cuts both.
        let rules = [["--dport", port], ["--sport", port]].map { ["INPUT", "-i", "lo", "-p", "tcp"] + $0 + ["-j", "DROP"] }
        for rule in rules { try await iptables(["-I"] + rule) }
        return { for rule in rules { try await iptables(["-D"] + rule) } }
    }

    static func iptables(_ arguments: [String]) async throws {
        let path = FileManager.default.isExecutableFile(atPath: "/usr/sbin/iptables") ? "/usr/sbin/iptables" : "/sbin/iptables"
        let result = try await ChildProcess.run(path, ["-w"] + arguments)
        guard result.status == 0 else { throw TestSupportError("iptables \(arguments.joined(separator: " ")) exited \(result.status)") }
    }
}
