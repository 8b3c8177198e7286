import Foundation
import Metrics
import ServiceLifecycle
import SystemCall
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
            let response = try await RawHTTPClient.get("/healthz", port: runtime.healthPort)
            #expect(response.status == 200)
            #expect(response.headers["content-type"] == "application/json")
            #expect(response.headers["connection"] == "close")
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
            let failing = try await waitForResponse("/readyz", port: runtime.healthPort) { $0.body.contains("unreachable") }
            #expect(failing.status == 503)
            let failingBody = try jsonObject(failing.body)
            #expect(failingBody["ready"] as? Bool == false)
            #expect(failingBody["checks"] as? [String: String] == ["database": "unreachable: refused", "bus": "ok"])

            databaseUp.set()
            let passing = try await waitForResponse("/readyz", port: runtime.healthPort) { $0.status == 200 }
            let passingBody = try jsonObject(passing.body)
            #expect(passingBody["ready"] as? Bool == true)
            #expect(passingBody["checks"] as? [String: String] == ["database": "ok", "bus": "ok"])
        }
    }

    @Test func metricsExposeACounterIncrementedHere() async throws {
        try await withRunningRuntime(makeTestRuntime()) { runtime in
            Counter(label: "servicekit_test_requests_total", dimensions: [("route", "healthz")]).increment(by: 3)
            let response = try await RawHTTPClient.get("/metrics", port: runtime.healthPort)
            #expect(response.status == 200)
            #expect(response.headers["content-type"]?.hasPrefix("text/plain; version=0.0.4") == true)
            #expect(response.body.contains("# TYPE servicekit_test_requests_total counter"))
            #expect(response.body.contains(#"servicekit_test_requests_total{route="healthz"} 3"#), "\(response.body)")
        }
    }

    @Test func unknownPathsWrongMethodsAndBadRequestsGetErrors() async throws {
        try await withRunningRuntime(makeTestRuntime()) { runtime in
            let port = runtime.healthPort
            #expect(try await RawHTTPClient.get("/nope", port: port).status == 404)
            #expect(try await RawHTTPClient.get("/healthz?verbose=1", port: port).status == 200)
            let post = try await RawHTTPClient.get("/healthz", port: port, method: "POST")
            #expect(post.status == 405)
            #expect(post.headers["allow"] == "GET")
            let huge = "GET /healthz HTTP/1.1\r\nX-Padding: " + String(repeating: "a", count: 9000) + "\r\n\r\n"
            #expect(try await RawHTTPClient.send(Array(huge.utf8), port: port).status == 431)
            let endless = "GET /healthz HTTP/1.1\r\nX-Padding: " + String(repeating: "b", count: 20000)
            #expect(try await RawHTTPClient.send(Array(endless.utf8), port: port).status == 431)
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
            let port = runtime.healthPort
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

    @Test func aClientThatStallsMidRequestGets408() async throws {
        var limits = HealthServer.Limits()
        limits.requestTimeout = .milliseconds(300)
        try await withRunningRuntime(makeTestRuntime(healthLimits: limits)) { runtime in
            let port = runtime.healthPort
            let bytes = try await RawHTTPClient.onThread {
                let descriptor = try RawHTTPClient.connect(port: port)
                defer { close(descriptor) }
                try RawHTTPClient.writeAll(Array("GET /healthz HTTP/1.1\r\nHost: x".utf8), to: descriptor)
                return try RawHTTPClient.readToEnd(descriptor)
            }
            #expect(try RawHTTPClient.parse(bytes).status == 408)
        }
    }

    @Test func bindingAPortInUseFailsWithTheCallAndErrno() throws {
        let first = try makeTestRuntime()
        let environment = EnvironmentReader(["HEALTH_PORT": String(first.healthPort)])
        let configuration = try CommonConfiguration(environment: environment, defaultHealthPort: 0)
        #expect(throws: SystemCallError(call: "bind", errorNumber: EADDRINUSE)) {
            _ = try ServiceRuntime(
                name: "second", configuration: configuration, logger: first.logger, metrics: first.metrics)
        }
    }
}
