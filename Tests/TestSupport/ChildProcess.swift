import Foundation

/// Runs a program to completion without blocking a cooperative thread: its exit status, its
/// standard output and its standard error, each captured in a file of its own (a pipe would block
/// a chatty child, and a daemon the child starts would hold a pipe open past its exit).
public enum ChildProcess {
    public struct Result: Sendable {
        public let status: Int32
        public let output: String
        public let errors: String
    }

    /// The path of the product `name` in the build folder next to the test bundle.
    public static func product(_ name: String) -> String {
        PeerProcess.productsDirectory.appendingPathComponent(name).path
    }

    public static func run(_ executable: String, _ arguments: [String], environment: [String: String]? = nil) async throws -> Result {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        if let environment { process.environment = environment }
        let folder = FileManager.default.temporaryDirectory
        let output = folder.appendingPathComponent("child-out-\(UUID().uuidString)")
        let errors = folder.appendingPathComponent("child-err-\(UUID().uuidString)")
        for file in [output, errors] { _ = FileManager.default.createFile(atPath: file.path, contents: nil) }
        defer { for file in [output, errors] { try? FileManager.default.removeItem(at: file) } }
        let outputHandle = try FileHandle(forWritingTo: output)
        let errorHandle = try FileHandle(forWritingTo: errors)
        process.standardOutput = outputHandle
        process.standardError = errorHandle
        let status: Int32 = try await withCheckedThrowingContinuation { continuation in
            process.terminationHandler = { continuation.resume(returning: $0.terminationStatus) }
            do { try process.run() } catch { continuation.resume(throwing: error) }
        }
        // Keep the Process alive until it has reported: Swift may otherwise release it after
        // `run()`, and a deallocated Process never calls its termination handler.
        withExtendedLifetime(process) {}
        try outputHandle.close()
        try errorHandle.close()
        return Result(
            status: status, output: try String(contentsOf: output, encoding: .utf8), errors: try String(contentsOf: errors, encoding: .utf8))
    }
}
