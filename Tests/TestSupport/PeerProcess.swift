import Foundation
import Locks

/// An executable of this package run as a child process: a real server to call, signal or kill.
public final class PeerProcess: Sendable {
    public let process: Process
    /// What the child printed after `ready ` on its ready line.
    public let readyLine: String
    /// Everything the child printed (stdout and stderr), for assertions and failure messages.
    public var output: String { collected.text }
    private let collected = OutputBuffer()

    /// The ready line's text after `ready `, e.g. a bound endpoint.
    public var endpoint: String { readyLine }

    /// The health port a service named in its ready line (`health=<port>`), if it did.
    public var healthPort: Int? {
        readyLine.split(separator: " ").first { $0.hasPrefix("health=") }.flatMap { Int($0.dropFirst(7)) }
    }

    /// Starts the product `name` from the build folder next to the test bundle and waits (up to
    /// `timeout`) for a line starting with `ready `. Output keeps being drained afterwards so the
    /// child never blocks on a full pipe.
    public init(
        _ name: String, arguments: [String] = [], environment: [String: String]? = nil, timeout: Duration = .seconds(30)
    ) async throws {
        let process = Process()
        process.executableURL = Self.productsDirectory.appendingPathComponent(name)
        process.arguments = arguments
        if let environment { process.environment = environment }
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        try process.run()
        self.process = process
        let collected = self.collected
        let handle = pipe.fileHandleForReading
        // Reading blocks: it runs on a thread of its own, never on the cooperative pool.
        let ready: String? = await withCheckedContinuation { continuation in
            let once = ResumeOnce(continuation)
            let resume: @Sendable (String?) -> Void = { once.resume($0) }
            Thread {
                var line = Data()
                while case let chunk = handle.availableData, !chunk.isEmpty {
                    collected.append(chunk)
                    for byte in chunk {
                        if byte == UInt8(ascii: "\n") {
                            let text = String(decoding: line, as: UTF8.self)
                            if let ready = Self.readyFields(text) { resume(ready) }
                            line.removeAll()
                        } else {
                            line.append(byte)
                        }
                    }
                }
                resume(nil)
            }.start()
            Thread {
                Thread.sleep(forTimeInterval: Double(timeout.components.seconds))
                resume(nil)
            }.start()
        }
        guard let ready else {
            if process.isRunning { process.terminate() }
            throw PeerProcessError.notReady(name: name, output: collected.text)
        }
        readyLine = ready
    }

    /// The fields of a ready line, as text (`ready http=8080 health=5750` gives `http=8080 health=5750`)
    /// or as a `LOG_FORMAT=json` process writes it (the log object whose `message` is `ready` and
    /// that has a `health` field: its `http` and `health` fields, in that order, in the same
    /// `key=value` form; ServiceKit's own `ready` log line has no `health`); nil for any other line.
    static func readyFields(_ line: String) -> String? {
        if line.hasPrefix("ready ") { return String(line.dropFirst("ready ".count)) }
        guard line.hasPrefix("{"),
            let object = (try? JSONSerialization.jsonObject(with: Data(line.utf8))) as? [String: Any],
            object["message"] as? String == "ready", object["health"] != nil
        else { return nil }
        return ["http", "health"].compactMap { key in (object[key] as? String).map { "\(key)=\($0)" } }
            .joined(separator: " ")
    }

    /// SIGKILL: no handler runs, no reply goes out, sockets die with the process.
    public func kill() {
        Foundation.kill(process.processIdentifier, SIGKILL)
        ChildExit.waitUntilDead(process)  // not waitUntilExit: see ProcessExit.swift
    }

    public func signal(_ number: Int32) { Foundation.kill(process.processIdentifier, number) }

    /// Waits (off the cooperative pool) until the process has ended, by Foundation's account or,
    /// before Foundation has reaped it, by the kernel's (ProcessExit.swift); false at the timeout.
    public func waitUntilEnded(timeout: Duration) async -> Bool {
        let end = ContinuousClock.now + timeout
        while process.isRunning, !ChildExit.isDead(process.processIdentifier) {
            guard ContinuousClock.now < end else { return false }
            try? await Task.sleep(for: .milliseconds(20))
        }
        return true
    }

    /// Waits (off the cooperative pool) for the process to exit; `nil` if it is still running at the timeout.
    public func waitForExit(timeout: Duration) async -> Int32? {
        let end = ContinuousClock.now + timeout
        while ContinuousClock.now < end {
            if !process.isRunning { return process.terminationStatus }
            try? await Task.sleep(for: .milliseconds(20))
        }
        return process.isRunning ? nil : process.terminationStatus
    }

    deinit { if process.isRunning { Foundation.kill(process.processIdentifier, SIGKILL) } }

    /// The folder holding this package's built executables (where the test bundle lives).
    public static var productsDirectory: URL {
        URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
    }
}

/// What a child printed, appended from the reading thread.
private final class OutputBuffer: Sendable {
    private let data = LockedValue(Data())
    func append(_ chunk: Data) { data.withLock { $0.append(chunk) } }
    var text: String { data.withLock { String(decoding: $0, as: UTF8.self) } }
}

/// Resumes a continuation with the first value offered (the ready line, or the timeout's nil).
private final class ResumeOnce: Sendable {
    private let continuation: LockedValue<CheckedContinuation<String?, Never>?>
    init(_ continuation: CheckedContinuation<String?, Never>) { self.continuation = LockedValue(continuation) }
    func resume(_ value: String?) {
        continuation.withLock { stored in
            defer { stored = nil }
            return stored
        }?.resume(returning: value)
    }
}

public enum PeerProcessError: Error, CustomStringConvertible {
    case notReady(name: String, output: String)

    public var description: String {
        switch self {
        case .notReady(let name, let output): "\(name) did not print its ready line; it printed:\n\(output)"
        }
    }
}
