import SystemCall

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Where finished log lines go. Standard output in services; a closure collecting lines in tests.
public struct LogOutput: Sendable {
    private let writeLine: @Sendable (String) -> Void

    /// - Parameter writeLine: receives one complete line, without the trailing newline.
    public init(_ writeLine: @escaping @Sendable (String) -> Void) {
        self.writeLine = writeLine
    }

    func emit(_ line: String) {
        writeLine(line)
    }

    /// Writes each line with a single `write(2)` to descriptor 1, so lines from different threads
    /// never interleave (pipes keep writes up to `PIPE_BUF` whole) and nothing waits in a buffer
    /// when the process is killed.
    public static let standardOutput = LogOutput { line in
        var bytes = Array((line + "\n").utf8)
        var offset = 0
        while offset < bytes.count {
            let written = bytes.withUnsafeMutableBytes { buffer in
                (try? systemCall("write") { write(1, buffer.baseAddress! + offset, buffer.count - offset) }) ?? -1
            }
            if written <= 0 { return }  // stdout closed or broken: losing a log line beats crashing
            offset += written
        }
    }
}
