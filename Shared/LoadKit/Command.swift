import Foundation

/// Runs a program to completion and returns what it printed (standard output and error
/// together). Blocking: call it from a thread of its own, never from the cooperative pool.
public enum Command {
    /// `path` is absolute, or a name looked up on `PATH`; `environment` replaces ours when given.
    public static func run(_ path: String, _ arguments: [String], environment: [String: String]? = nil) throws -> String {
        let process = Process()
        if let environment { process.environment = environment }
        process.executableURL = URL(fileURLWithPath: path.hasPrefix("/") ? path : "/usr/bin/env")
        process.arguments = path.hasPrefix("/") ? arguments : [path] + arguments
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        try process.run()
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        let text = String(decoding: data, as: UTF8.self)
        guard process.terminationStatus == 0 else { throw LoadError("\(path) failed:\n\(text)") }
        return text
    }
}
