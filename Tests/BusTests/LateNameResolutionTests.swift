import Foundation
import Synchronization
import TestSupport
import Testing

@testable import Bus

/// A client whose server's host name does not resolve yet, or first resolves to an address that
/// drops packets, reaches the server within seconds of the name resolving to it (the podman case:
/// network aliases appear after the clients start). The names are made to resolve by adding and
/// moving a line of `/etc/hosts` for a unique `compass-late-*.test` name, removed in all cases;
/// the suite needs a writable `/etc/hosts` (root), as in CI and the dev container.
@Suite(.serialized, .enabled(if: HostsFile.isWritable, "needs a writable /etc/hosts"))
struct LateNameResolutionTests {
    let logger = testLogger()

    @Test func clientReachesServerOnceItsNameStartsResolving() async throws {
        let name = HostsFile.uniqueName()
        defer { HostsFile.remove(name) }
        let server = try await startServer(on: "127.0.0.1", port: nil)
        let port = try #require(server.boundEndpoints.first.flatMap { URL(string: $0)?.port })
        let client = try await RPCClient.connect(to: "test", endpoints: ["tcp://\(name):\(port)"], logger: logger)

        // Unresolvable: the call finds no connection.
        await #expect(throws: BusError.self) {
            _ = try await client.call(TestEcho.self, EchoRequest(number: 1), timeout: .milliseconds(500))
        }
        #expect(!client.isConnected)

        HostsFile.set(name, to: "127.0.0.1")
        // Answered: the client resolved the name again by itself (a client that resolved only once
        // would fail this call at its deadline, however long).
        let reply = try await client.call(TestEcho.self, EchoRequest(number: 2), timeout: .seconds(30))
        #expect(reply.number == 2)
        await client.close()
        await server.shutdown()
    }

    /// A connect to an address that silently drops the SYN waits, without `ZMQ_CONNECT_TIMEOUT`,
    /// for the kernel's SYN retries (about two minutes) before libzmq resolves the name again.
    @Test func clientLeavesAnAddressThatDropsConnectsOnceTheNameMoves() async throws {
        let name = HostsFile.uniqueName()
        defer { HostsFile.remove(name) }
        let blackHole = try BlackHoleListener(address: "127.0.0.2")
        defer { blackHole.close() }
        let server = try await startServer(on: "127.0.0.1", port: blackHole.port)
        HostsFile.set(name, to: "127.0.0.2")
        let client = try await RPCClient.connect(to: "test", endpoints: ["tcp://\(name):\(blackHole.port)"], logger: logger)

        await #expect(throws: BusError.self) {
            _ = try await client.call(TestEcho.self, EchoRequest(number: 1), timeout: .milliseconds(700))
        }
        #expect(!client.isConnected)

        HostsFile.set(name, to: "127.0.0.1")
        // Answered: the client gave up its connect to the black hole (the connect timeout, 2 s) and
        // resolved the name again; one stuck on the black hole would fail at this deadline.
        let reply = try await client.call(TestEcho.self, EchoRequest(number: 2), timeout: .seconds(30))
        #expect(reply.number == 2)
        await client.close()
        await server.shutdown()
    }

    private func startServer(on address: String, port: Int?) async throws -> RPCServer {
        let endpoint = "tcp://\(address):\(port.map(String.init) ?? "*")"
        let server = RPCServer(name: "test", endpoints: [endpoint], logger: logger)
        registerTestHandlers(on: server)
        try await server.start()
        return server
    }
}

/// Edits `/etc/hosts` in place (it is often a bind mount, which a rename would not replace), one
/// line per test name, under a lock: the tests' own edits never interleave.
enum HostsFile {
    static let path = "/etc/hosts"
    private static let edits = Mutex(())

    static var isWritable: Bool { access(path, W_OK) == 0 }

    static func uniqueName() -> String { "compass-late-\(UInt32.random(in: 0...UInt32.max)).test" }

    /// Makes `name` resolve to `address` (replacing its line, if any).
    static func set(_ name: String, to address: String) {
        edit { lines in lines.filter { !mentions($0, name) } + ["\(address) \(name)"] }
    }

    static func remove(_ name: String) { edit { lines in lines.filter { !mentions($0, name) } } }

    private static func mentions(_ line: Substring, _ name: String) -> Bool {
        line.split(whereSeparator: \.isWhitespace).dropFirst().contains { $0 == name }
    }

    private static func edit(_ change: ([Substring]) -> [Substring]) {
        edits.withLock { _ in
            guard let text = try? String(contentsOfFile: path, encoding: .utf8) else { return }
            let lines = text.split(separator: "\n", omittingEmptySubsequences: false).filter { !$0.isEmpty }
            let updated = change(lines).joined(separator: "\n") + "\n"
            try? updated.write(toFile: path, atomically: false, encoding: .utf8)
        }
    }
}

/// A TCP address where connects hang: a listener with a backlog of one that never accepts, its
/// queue filled by a connection of its own, so the kernel drops further SYNs unanswered, as a
/// host that is not (or no longer) there does.
final class BlackHoleListener {
    let port: Int
    private let listener: Int32
    private let filler: Int32

    init(address: String) throws {
        var socketAddress = sockaddr_in()
        socketAddress.sin_family = sa_family_t(AF_INET)
        inet_pton(AF_INET, address, &socketAddress.sin_addr)
        let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        let filler = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &socketAddress) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { address in
                bind(listener, address, length) == 0 && listen(listener, 0) == 0
                    && getsockname(listener, address, &length) == 0 && connect(filler, address, length) == 0
            }
        }
        (self.listener, self.filler) = (listener, filler)
        port = Int(UInt16(bigEndian: socketAddress.sin_port))
        guard bound else {
            close()
            throw BusError(.internal, "black hole on \(address): errno \(errno)")
        }
    }

    func close() {
        _ = Glibc.close(filler)
        _ = Glibc.close(listener)
    }
}
