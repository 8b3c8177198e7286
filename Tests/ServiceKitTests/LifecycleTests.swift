import Foundation
import ServiceLifecycle
import Testing

@testable import ServiceKit

/// A service that waits for graceful shutdown and records what `/readyz` said while it drained.
struct DrainingService: Service {
    let port: @Sendable () async throws -> Int
    let sawShutdown: Flag
    let readyzDuringDrain: Flag

    func run() async throws {
        try await gracefulShutdown()
        sawShutdown.set()
        let response = try await RawHTTPClient.get("/readyz", port: try await port())
        readyzDuringDrain.set(response.status == 503 && response.body.contains(#""status":"shutting down""#))
    }
}

@Suite("Lifecycle")
struct LifecycleTests {
    @Test func gracefulShutdownStopsEverythingAndClosesThePort() async throws {
        let runtime = try makeTestRuntime()
        let sawShutdown = Flag()
        let readyzDuringDrain = Flag()
        runtime.addService(
            DrainingService(port: { try await runtime.healthPort() }, sawShutdown: sawShutdown, readyzDuringDrain: readyzDuringDrain))
        let group = runtime.makeServiceGroup()
        let running = Task { try await group.run() }
        let port = try await runtime.healthPort()

        _ = try await waitForResponse("/readyz", port: port) { $0.status == 200 }
        await group.triggerGracefulShutdown()
        try await running.value

        #expect(sawShutdown.isSet)
        #expect(readyzDuringDrain.isSet, "readiness should be 503 'shutting down' while services drain")
        #expect(try await RawHTTPClient.isRefused(port: port))
    }

    @Test func cancellingTheGroupAlsoClosesThePort() async throws {
        let runtime = try makeTestRuntime()
        let group = runtime.makeServiceGroup()
        let running = Task { try await group.run() }
        let port = try await runtime.healthPort()
        _ = try await waitForResponse("/healthz", port: port) { $0.status == 200 }
        running.cancel()
        _ = try? await running.value
        #expect(try await RawHTTPClient.isRefused(port: port))
    }

    @Test func aFailingServiceShutsTheGroupDown() async throws {
        /// Fails once the health server listens, so that its port is known and must be closed after.
        struct Crashing: Service {
            let runtime: ServiceRuntime
            func run() async throws {
                _ = try await runtime.healthPort()
                throw Failure()
            }
        }
        let runtime = try makeTestRuntime()
        runtime.addService(Crashing(runtime: runtime))
        await #expect(throws: Failure.self) {
            try await runtime.makeServiceGroup().run()
        }
        #expect(try await RawHTTPClient.isRefused(port: try await runtime.healthPort()))
    }
}
