import Locks
import ServiceLifecycle
import Testing

@testable import ServiceKit

/// What the services of one group did, in order.
final class EventLog: Sendable {
    private let events = LockedValue<[String]>([])
    var all: [String] { events.withLock { $0 } }
    func record(_ event: String) { events.withLock { $0.append(event) } }
}

/// Waits for graceful shutdown, then records that it stopped: a user of what a ``CloseOnShutdown`` closes.
struct RecordingUser: Service {
    let log: EventLog

    func run() async {
        try? await gracefulShutdown()
        log.record("user stopped")
    }
}

@Suite("CloseOnShutdown")
struct CloseOnShutdownTests {
    @Test func closesAtGracefulShutdownAfterTheServicesAddedAfterItHaveStopped() async throws {
        let runtime = try makeTestRuntime()
        let log = EventLog()
        runtime.addService(CloseOnShutdown(name: "resource") { log.record("resource closed") })
        runtime.addService(RecordingUser(log: log))
        runtime.addService(CloseOnShutdown(name: "user's own resource") { log.record("user's own resource closed") })
        let group = runtime.makeServiceGroup()
        let running = Task { try await group.run() }

        _ = try await waitForResponse("/readyz", port: try await runtime.healthPort()) { $0.status == 200 }
        #expect(log.all.isEmpty, "nothing closes before shutdown")
        await group.triggerGracefulShutdown()
        try await running.value

        #expect(log.all == ["user's own resource closed", "user stopped", "resource closed"])
    }

    @Test func closesWhenTheGroupIsCancelled() async throws {
        let runtime = try makeTestRuntime()
        let log = EventLog()
        runtime.addService(CloseOnShutdown(name: "resource") { log.record("resource closed") })
        let group = runtime.makeServiceGroup()
        let running = Task { try await group.run() }

        _ = try await waitForResponse("/readyz", port: try await runtime.healthPort()) { $0.status == 200 }
        running.cancel()
        _ = try? await running.value

        #expect(log.all == ["resource closed"])
    }

    @Test func theGroupsLogLinesNameWhatItCloses() {
        #expect(String(describing: CloseOnShutdown(name: "postgres pool") {}) == "postgres pool")
    }
}
