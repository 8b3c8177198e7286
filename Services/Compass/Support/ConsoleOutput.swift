import Foundation
import Locks

/// Our standard output, shared by every child's reader thread: one whole line at a time.
enum ConsoleOutput {
    static let isTerminal = isatty(STDOUT_FILENO) == 1
    private static let lock = LockedValue(())

    static func write(_ text: String) {
        lock.withLock { _ in
            FileHandle.standardOutput.write(Data(text.utf8))
        }
    }

    static func say(_ text: String) { write("compass  | \(text)\n") }
}
