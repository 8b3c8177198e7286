import Logging
import Testing

@testable import ServiceKit

@Suite("Readiness")
struct ReadinessTests {
    let logger = Logger(label: "readiness-test") { _ in SwiftLogNoOpLogHandler() }

    @Test func notReadyUntilTheFirstRoundCompletes() async {
        let cache = ReadinessCache()
        #expect(!cache.snapshot.isReady)
        #expect(cache.snapshot.json == #"{"ready":false,"status":"starting","checks":{}}"#)
        let poller = ReadinessPoller(checks: [], cache: cache, logger: logger)
        await poller.pollOnce()
        #expect(cache.snapshot.isReady)
    }

    @Test func aThrowingCheckReportsTheError() async {
        let cache = ReadinessCache()
        let poller = ReadinessPoller(
            checks: [ReadinessCheck("bus", throwing: { throw Failure() })], cache: cache, logger: logger)
        await poller.pollOnce()
        #expect(cache.snapshot.checks == ["bus": .notReady("disk on fire")])
        #expect(cache.snapshot.json == #"{"ready":false,"status":"running","checks":{"bus":"disk on fire"}}"#)
    }

    @Test func aDegradedCheckStillTakesTrafficAndSaysWhy() async {
        let cache = ReadinessCache()
        let poller = ReadinessPoller(
            checks: [ReadinessCheck("bus.legal") { .degraded("not connected") }, ReadinessCheck("database") { .ready }],
            cache: cache, logger: logger)
        await poller.pollOnce()
        #expect(cache.snapshot.isReady)
        #expect(cache.snapshot.json == #"{"ready":true,"status":"running","checks":{"bus.legal":"degraded: not connected","database":"ok"}}"#)
        let failing = ReadinessCache()
        await ReadinessPoller(
            checks: [ReadinessCheck("bus.legal") { .degraded("not connected") }, ReadinessCheck("backends") { .notReady("none") }],
            cache: failing, logger: logger
        ).pollOnce()
        #expect(!failing.snapshot.isReady)
    }

    @Test func aHungCheckTimesOutWithoutHoldingUpThePoller() async {
        let cache = ReadinessCache()
        // Ignores cancellation for a minute: the poller must not wait for it. Each poll must return
        // while the check is still running (it says so when it returns), not after it.
        let returned = Flag()
        let hung = ReadinessCheck("database") {
            await Task.detached { try? await Task.sleep(for: .seconds(60)) }.value
            returned.set()
            return .ready
        }
        let poller = ReadinessPoller(checks: [hung], cache: cache, timeout: .milliseconds(100), logger: logger)
        await poller.pollOnce()
        #expect(!returned.isSet, "the poll waited for the hung check")
        #expect(cache.snapshot.checks["database"] == .notReady("timed out after 0.1 seconds"))
        // Still running: not started a second time, reported at once.
        await poller.pollOnce()
        #expect(cache.snapshot.checks["database"] == .notReady("timed out: the previous run has not returned"))
        #expect(!returned.isSet, "the second poll waited for the hung check")
    }

    @Test func shuttingDownIsFinal() async {
        let cache = ReadinessCache()
        cache.markShuttingDown()
        let poller = ReadinessPoller(checks: [], cache: cache, logger: logger)
        await poller.pollOnce()
        #expect(!cache.snapshot.isReady)
        #expect(cache.snapshot.phase == .shuttingDown)
    }
}
