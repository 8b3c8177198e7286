import Bus
import Foundation
import Logging
import TestSupport

/// A bus endpoint in its own process, for tests that must kill, freeze or cut off a peer.
/// Usage: `BusTestPeer [endpoint]`, a server of the test methods; or `BusTestPeer publish
/// [endpoint]`, a publisher of a `test.tick` event every 50 ms whose envelope sequence counts up
/// from 1. Prints `ready <bound endpoint>` once it listens.
@main
struct BusTestPeer {
    static func main() async throws {
        var arguments = Array(CommandLine.arguments.dropFirst())
        let publishes = arguments.first == "publish"
        if publishes { arguments.removeFirst() }
        let endpoint = arguments.first ?? "tcp://127.0.0.1:*"
        var logger = Logger(label: "bus-test-peer")
        logger.logLevel = .error
        if publishes {
            let publisher = try await EventPublisher.bind(name: "peer", endpoints: [endpoint], logger: logger)
            ready(publisher.boundEndpoints[0])
            var sequence: Int64 = 0
            while true {
                sequence += 1
                try publisher.publish(type: "test.tick", EchoRequest(number: Int(sequence)), sequence: sequence)
                try await Task.sleep(for: .milliseconds(50))
            }
        }
        let server = RPCServer(name: "peer", endpoints: [endpoint], logger: logger)
        registerTestHandlers(on: server)
        try await server.start()
        ready(server.boundEndpoints[0])
        while true { try await Task.sleep(for: .seconds(3600)) }
    }

    /// Unbuffered, so the test sees the line at once.
    static func ready(_ endpoint: String) {
        FileHandle.standardOutput.write(Data("ready \(endpoint)\n".utf8))
    }
}
