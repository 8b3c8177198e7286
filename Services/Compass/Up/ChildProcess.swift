import Foundation
import Synchronization

/// One executable of the stack run as a child: its output copied to ours line by line with a
/// coloured `name |` prefix, and a callback when it exits.
final class ChildProcess: Sendable {
    let name: String
    let process: Process

    init(
        name: String, executable: URL, arguments: [String] = [], environment: [String: String], colour: Int,
        onExit: @escaping @Sendable (Int32) -> Void
    ) throws {
        self.name = name
        process = Process()
        process.executableURL = executable
        process.arguments = arguments
        process.environment = environment
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        process.standardInput = FileHandle.nullDevice
        process.terminationHandler = { onExit($0.terminationStatus) }
        try process.run()
        let prefix = Self.prefix(name, colour: colour)
        let handle = pipe.fileHandleForReading
        // Reading blocks, so it has a thread of its own rather than a task on the cooperative pool.
        Thread {
            var pending = Data()
            while case let chunk = handle.availableData, !chunk.isEmpty {
                pending.append(chunk)
                while let newline = pending.firstIndex(of: UInt8(ascii: "\n")) {
                    let line = pending[pending.startIndex..<newline]
                    ConsoleOutput.write(prefix + String(decoding: line, as: UTF8.self) + "\n")
                    pending.removeSubrange(pending.startIndex...newline)
                }
            }
            if !pending.isEmpty { ConsoleOutput.write(prefix + String(decoding: pending, as: UTF8.self) + "\n") }
        }.start()
    }

    var pid: Int32 { process.processIdentifier }
    var isRunning: Bool { process.isRunning }

    func signal(_ number: Int32) {
        if process.isRunning { kill(process.processIdentifier, number) }
    }

    static func prefix(_ name: String, colour: Int) -> String {
        let padded = name.padding(toLength: 9, withPad: " ", startingAt: 0)
        return ConsoleOutput.isTerminal ? "\u{1B}[\(colour)m\(padded)|\u{1B}[0m " : "\(padded)| "
    }
}
