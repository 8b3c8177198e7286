import Foundation
import ObjectStorage
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// The store away: nothing listening, a peer that never answers, SeaweedFS stopped or killed and
/// started again on the same folder. Each is a clear error whose `isRetryable` is true.
@Suite("S3 client faults")
struct S3FaultTests {
    static func configuration(port: Int, timeout: TimeInterval = 10) -> S3Configuration {
        S3Configuration(
            endpoint: URL(string: "http://127.0.0.1:\(port)")!, region: "us-east-1", bucket: "compass-test", accessKeyID: "k",
            secretAccessKey: "s", pathStyle: true, requestTimeout: timeout)
    }

    /// A listening socket that never accepts: connections complete in the kernel and hang. With
    /// `listening: false`, a socket bound but not listening: connections to its port are refused,
    /// and no other socket can take the port while it is open (a port closed instead could be
    /// taken by another test's socket before the connect).
    static func blackHole(listening: Bool = true) throws -> (fd: Int32, port: Int) {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let ok = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, length) == 0 && (!listening || listen(fd, 64) == 0) && getsockname(fd, $0, &length) == 0
            }
        }
        guard ok else { throw POSIXError(.EADDRINUSE) }
        return (fd, Int(UInt16(bigEndian: address.sin_port)))
    }

    @Test func nothingListeningIsUnreachableAndRetryable() async throws {
        let (fd, port) = try Self.blackHole(listening: false)
        defer { close(fd) }
        let client = try S3Client(configuration: Self.configuration(port: port), logger: testLogger())
        let error = await #expect(throws: S3Error.self) { try await client.checkBucket() }
        #expect(error?.reason == .unreachable)
        #expect(error?.status == nil)
        #expect(error?.isRetryable == true)
        #expect(error?.operation == "CheckBucket")
        #expect(error?.message.contains("could not connect to http://127.0.0.1:\(port)") == true)
    }

    /// Six calls hang on a peer that never answers (more than the cooperative pool's two threads)
    /// while another task still runs at once: the calls wait off the pool. Each then times out.
    @Test func hangingCallsTimeOutWithoutHoldingThePool() async throws {
        let (fd, port) = try Self.blackHole()
        defer { close(fd) }
        // A long timeout, so a pool the calls held (the task below would run only after 6 s) stays
        // far from a pool that is merely busy with the other suites running beside this one.
        let client = try S3Client(configuration: Self.configuration(port: port, timeout: 6), logger: testLogger())
        let ended = Tally()
        try await withThrowingTaskGroup(of: S3Error?.self) { group in
            for _ in 0..<6 {
                group.addTask {
                    defer { ended.add() }
                    do { try await client.checkBucket() } catch let error as S3Error { return error }
                    return nil
                }
            }
            try await Task.sleep(for: .milliseconds(300))
            // A pool blocked by the six calls would run this only once they ended (at their 6 s
            // timeouts): it must run while all six still wait.
            let endedWhenRun = await Task.detached { ended.count }.value
            #expect(endedWhenRun == 0, "a task ran only after \(endedWhenRun) of the six calls had ended")
            var errors: [S3Error] = []
            for try await error in group { if let error { errors.append(error) } }
            #expect(errors.count == 6)
            #expect(errors.allSatisfy { $0.reason == .timedOut && $0.isRetryable })
        }
    }

    @Test func stoppedServerIsRetryableAndKilledServerKeepsItsObjects() async throws {
        let started = ContinuousClock.now
        let server = try await SeaweedFS.start()
        let startUp = ContinuousClock.now - started
        print("seaweedfs: started with a bucket in \(startUp)")
        let client = try server.client()
        try await client.putObject(key: "kept", bytes: Array(repeating: 7, count: 100_000))

        await server.stop()
        // A client with a connection kept from before may send on it before it notices the server
        // closed it, and then reads a reset: `connectionLost` (seen 1 run in 6, URLError -1005,
        // "Recv failure: Connection reset by peer"), where one without finds nothing listening:
        // `unreachable`. Both are retryable, which is what callers act on.
        let stopped = await #expect(throws: S3Error.self) { try await client.getObject(key: "kept") }
        #expect(stopped?.isRetryable == true)
        #expect(stopped?.reason == .unreachable || stopped?.reason == .connectionLost, "\(String(describing: stopped))")
        let fresh = await #expect(throws: S3Error.self) { try await server.client().getObject(key: "kept") }
        #expect(fresh?.isRetryable == true)
        #expect(fresh?.reason == .unreachable, "\(fresh.map { "\($0.code ?? "-"): \($0.message)" } ?? "no error")")

        let restarted = ContinuousClock.now
        try await server.startProcess()
        print("seaweedfs: restarted on the same folder in \(ContinuousClock.now - restarted)")
        #expect(try await getWhenReady(client, "kept") == Array(repeating: 7, count: 100_000))

        try await putWhenReady(client, "after-restart", [1, 2, 3])
        server.kill()
        await #expect(throws: S3Error.self) { try await client.headObject(key: "kept") }
        try await server.startProcess()
        #expect(try await getWhenReady(client, "after-restart") == [1, 2, 3])
        await server.stop()
    }

    /// After a restart a write may wait for the volume server to report to the master (a PUT timed
    /// out once under the full test run while reads already worked): retried as a caller would.
    func putWhenReady(_ client: S3Client, _ key: String, _ bytes: [UInt8]) async throws {
        let deadline = ContinuousClock.now + .seconds(60)
        while true {
            do {
                _ = try await client.putObject(key: key, bytes: bytes)
                return
            } catch let error as S3Error
                where error.isRetryable && ContinuousClock.now < deadline
            {
                try await Task.sleep(for: .milliseconds(100))
            }
        }
    }

    /// After a start the filer may answer 5xx for a moment: retried as a caller would.
    func getWhenReady(_ client: S3Client, _ key: String) async throws -> [UInt8] {
        let deadline = ContinuousClock.now + .seconds(30)
        while true {
            do { return try await client.getObject(key: key) } catch let error as S3Error where error.isRetryable && ContinuousClock.now < deadline {
                try await Task.sleep(for: .milliseconds(100))
            }
        }
    }
}
