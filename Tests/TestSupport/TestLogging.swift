import Logging

/// A logger for tests: errors only, so expected warnings (plaintext bus, refused peers) stay quiet.
public func testLogger(_ label: String = "test") -> Logger {
    var logger = Logger(label: label)
    logger.logLevel = .error
    return logger
}

/// A fresh ipc endpoint in the temporary folder.
public func ipcEndpoint() -> String {
    "ipc:///tmp/compass-test-\(UInt64.random(in: 0...UInt64.max)).sock"
}
