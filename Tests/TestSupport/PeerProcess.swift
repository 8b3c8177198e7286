import Foundation

/// A test executable of this package run as a child process (a real server to kill mid-call).
public final class PeerProcess: Sendable {
    public let process: Process
    /// What the child printed after `ready `: its bound endpoint.
    public let endpoint: String

    /// Starts the product `name` from the build folder next to the test bundle and waits for its
    /// `ready <endpoint>` line.
    public init(_ name: String, arguments: [String] = [], timeout: Duration = .seconds(20)) async throws {
        let binary = Self.productsDirectory.appendingPathComponent(name)
        let process = Process()
        process.executableURL = binary
        process.arguments = arguments
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        self.process = process
        let handle = output.fileHandleForReading
        // Reading blocks: do it on a thread of its own, not on the cooperative pool.
        let line: String? = await withCheckedContinuation { continuation in
            Thread {
                var collected = Data()
                while let chunk = try? handle.read(upToCount: 1), !chunk.isEmpty {
                    if chunk == Data("\n".utf8) { break }
                    collected.append(chunk)
                }
                continuation.resume(returning: String(data: collected, encoding: .utf8))
            }.start()
        }
        guard let line, line.hasPrefix("ready ") else {
            process.terminate()
            throw PeerProcessError.notReady(name: name, output: line ?? "")
        }
        endpoint = String(line.dropFirst("ready ".count))
        _ = timeout
    }

    /// SIGKILL: no handler runs, no reply goes out, sockets die with the process.
    public func kill() {
        Foundation.kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
    }

    public func signal(_ number: Int32) { Foundation.kill(process.processIdentifier, number) }

    deinit { if process.isRunning { Foundation.kill(process.processIdentifier, SIGKILL) } }

    /// The folder holding this package's built executables (where the test bundle lives).
    public static var productsDirectory: URL {
        URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
    }
}

public enum PeerProcessError: Error {
    case notReady(name: String, output: String)
}
