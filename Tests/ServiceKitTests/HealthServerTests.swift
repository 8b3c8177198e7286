import Foundation
import Metrics
import NIOCore
import ServiceLifecycle
import Testing

@testable import ServiceKit

#if canImport(Glibc)
    import Glibc
#endif

/// Runs `body` with the runtime's group serving, then shuts it down and checks it finished cleanly.
func withRunningRuntime(
    _ runtime: ServiceRuntime, _ body: (ServiceRuntime) async throws -> Void
) async throws {
    let group = runtime.makeServiceGroup()
    let running = Task { try await group.run() }
    do {
        try await body(runtime)
    } catch {
        await group.triggerGracefulShutdown()
        _ = try? await running.value
        throw error
    }
    await group.triggerGracefulShutdown()
    try await running.value
}

@Suite("Health server")
struct HealthServerTests {
    @Test func healthzReportsServiceVersionAndUptime() async throws {
        try await withRunningRuntime(makeTestRuntime(name: "legal")) { runtime in
            let response = try await RawHTTPClient.get("/healthz", port: try await runtime.healthPort())
            #expect(response.status == 200)
            #expect(response.headers["content-type"] == "application/json")
            #expect(response.headers["cache-control"] == "no-store")
            let body = try jsonObject(response.body)
            #expect(body["status"] as? String == "ok")
            #expect(body["service"] as? String == "legal")
            #expect(body["version"] as? String == "1.2.3")
            let uptime = try #require(body["uptimeSeconds"] as? Int)
            #expect(uptime >= 0 && uptime < 60)
        }
    }

    @Test func readyzTurnsFrom503To200WhenTheCheckStartsPassing() async throws {
        let runtime = try makeTestRuntime()
        let databaseUp = Flag(false)
        runtime.addReadinessCheck(ReadinessCheck("database") { databaseUp.isSet ? .ready : .notReady("unreachable: refused") })
        runtime.addReadinessCheck("bus") {}
        try await withRunningRuntime(runtime) { runtime in
            let failing = try await waitForResponse("/readyz", port: try await runtime.healthPort()) { $0.body.contains("unreachable") }
            #expect(failing.status == 503)
            let failingBody = try jsonObject(failing.body)
            #expect(failingBody["ready"] as? Bool == false)
            #expect(failingBody["checks"] as? [String: String] == ["database": "unreachable: refused", "bus": "ok"])

            databaseUp.set()
            let passing = try await waitForResponse("/readyz", port: try await runtime.healthPort()) { $0.status == 200 }
            let passingBody = try jsonObject(passing.body)
            #expect(passingBody["ready"] as? Bool == true)
            #expect(passingBody["checks"] as? [String: String] == ["database": "ok", "bus": "ok"])
        }
    }

    @Test func metricsExposeACounterIncrementedHere() async throws {
        try await withRunningRuntime(makeTestRuntime()) { runtime in
            Counter(label: "servicekit_test_requests_total", dimensions: [("route", "healthz")]).increment(by: 3)
            let response = try await RawHTTPClient.get("/metrics", port: try await runtime.healthPort())
            #expect(response.status == 200)
            #expect(response.headers["content-type"]?.hasPrefix("text/plain; version=0.0.4") == true)
            #expect(response.body.contains("# TYPE servicekit_test_requests_total counter"))
            #expect(response.body.contains(#"servicekit_test_requests_total{route="healthz"} 3"#), "\(response.body)")
        }
    }

    @Test func unknownPathsWrongMethodsAndBadRequestsGetErrors() async throws {
        try await withRunningRuntime(makeTestRuntime()) { runtime in
            let port = try await runtime.healthPort()
            let unknown = try await RawHTTPClient.get("/nope", port: port)
            #expect(unknown.status == 404 && unknown.body == #"{"error":"not found"}"#)
            #expect(try await RawHTTPClient.get("/healthz?verbose=1", port: port).status == 200)
            let post = try await RawHTTPClient.get("/healthz", port: port, method: "POST")
            #expect(post.status == 405)
            #expect(post.headers["allow"] == "GET")
            let head = try await RawHTTPClient.get("/healthz", port: port, method: "HEAD")
            #expect(head.status == 200 && head.body.isEmpty)
            #expect(try await RawHTTPClient.send(Array("HELLO\r\n\r\n".utf8), port: port).status == 400)
            #expect(try await RawHTTPClient.send([0xff, 0xfe, 13, 10, 13, 10], port: port).status == 400)
            // Still serving after all that.
            #expect(try await RawHTTPClient.get("/healthz", port: port).status == 200)
        }
    }

    @Test func aSilentClientDoesNotBlockOthersAndIsDroppedAtItsDeadline() async throws {
        var limits = HealthServer.Limits()
        // Wide margins: a loaded 2-core CI machine must not make this flaky (with 3 s, the first
        // seconds of a CI run, when every suite starts at once, served the request after 3.8 s).
        limits.requestTimeout = .seconds(10)
        try await withRunningRuntime(makeTestRuntime(healthLimits: limits)) { runtime in
            let port = try await runtime.healthPort()
            let silent = try await RawHTTPClient.onThread { try RawHTTPClient.connect(port: port, receiveTimeoutSeconds: 30) }
            defer { close(silent) }
            let response = try await RawHTTPClient.get("/healthz", port: port)
            #expect(response.status == 200)
            // Served while the silent client still holds its connection: not after its deadline.
            #expect(!RawHTTPClient.isReadable(silent), "served only after the silent client was dropped")
            // The server hangs up on the silent client (end of stream, no response) once its time is
            // up: end of stream, not the client's own 30 s receive timeout (which throws).
            let leftovers = try await RawHTTPClient.onThread { try RawHTTPClient.readToEnd(silent) }
            #expect(leftovers.isEmpty)
        }
    }

    @Test func aClientThatStallsMidRequestIsDisconnected() async throws {
        var limits = HealthServer.Limits()
        limits.requestTimeout = .milliseconds(300)
        try await withRunningRuntime(makeTestRuntime(healthLimits: limits)) { runtime in
            let port = try await runtime.healthPort()
            let bytes = try await RawHTTPClient.onThread {
                let descriptor = try RawHTTPClient.connect(port: port)
                defer { close(descriptor) }
                try RawHTTPClient.writeAll(Array("GET /healthz HTTP/1.1\r\nHost: x".utf8), to: descriptor)
                return try RawHTTPClient.readToEnd(descriptor)
            }
            // Closed at the header deadline without an answer, as the gateway closes a slow client
            // (``SlowClientGuard``), not at the client's own 30 s receive timeout (which throws).
            #expect(bytes.isEmpty)
        }
    }

    @Test func moreConnectionsThanTheCapAreClosedAtOnce() async throws {
        var limits = HealthServer.Limits()
        limits.maxConnections = 2
        try await withRunningRuntime(makeTestRuntime(healthLimits: limits)) { runtime in
            let port = try await runtime.healthPort()
            // Two keep-alive connections, each answered once (so the server has admitted both),
            // then held open.
            let held = try await RawHTTPClient.onThread {
                try (0..<2).map { _ in
                    let descriptor = try RawHTTPClient.connect(port: port)
                    try RawHTTPClient.writeAll(Array("GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n".utf8), to: descriptor)
                    try RawHTTPClient.readHead(descriptor)
                    return descriptor
                }
            }
            defer { for descriptor in held { close(descriptor) } }
            // Both places are taken: one more is closed with no answer.
            let refused = try await RawHTTPClient.onThread {
                let descriptor = try RawHTTPClient.connect(port: port)
                defer { close(descriptor) }
                try? RawHTTPClient.writeAll(Array("GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n".utf8), to: descriptor)
                return (try? RawHTTPClient.readToEnd(descriptor)) ?? []
            }
            #expect(refused.isEmpty)
        }
    }

    @Test func bindingAPortInUseFailsTheGroupWithTheAddress() async throws {
        try await withRunningRuntime(makeTestRuntime()) { first in
            let taken = try await first.healthPort()
            let environment = EnvironmentReader(["HEALTH_PORT": String(taken)])
            let configuration = try CommonConfiguration(environment: environment, defaultHealthPort: 0)
            let second = ServiceRuntime(name: "second", configuration: configuration, logger: first.logger, metrics: first.metrics)
            let failure = await #expect(throws: IOError.self) { try await second.makeServiceGroup().run() }
            #expect(failure?.errnoCode == EADDRINUSE, "\(String(describing: failure))")
            // Whoever waits for the port learns the same.
            let waiting = await #expect(throws: IOError.self) { try await second.healthPort() }
            #expect(waiting?.errnoCode == EADDRINUSE)
        }
    }
}
