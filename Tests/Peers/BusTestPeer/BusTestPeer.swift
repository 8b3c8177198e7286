import Bus
import Foundation
import Logging
import TestSupport

/// A bus server in its own process, for tests that must kill a server mid-call.
/// Usage: `BusTestPeer <endpoint>`; prints `ready <bound endpoint>` once it listens.
@main
struct BusTestPeer {
    static func main() async throws {
        let endpoint = CommandLine.arguments.dropFirst().first ?? "tcp://127.0.0.1:*"
        var logger = Logger(label: "bus-test-peer")
        logger.logLevel = .error
        let server = RPCServer(name: "peer", endpoints: [endpoint], logger: logger)
        registerTestHandlers(on: server)
        try await server.start()
        // Unbuffered, so the test sees the line at once.
        FileHandle.standardOutput.write(Data("ready \(server.boundEndpoints[0])\n".utf8))
        while true { try await Task.sleep(for: .seconds(3600)) }
    }
}
