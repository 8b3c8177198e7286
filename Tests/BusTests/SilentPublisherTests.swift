import Foundation
import Synchronization
import TestSupport
import Testing

@testable import Bus

/// A subscriber notices a publisher that went silent without closing its connection, and follows
/// it again once it answers: frozen (SIGSTOP keeps the socket open, the kernel keeps acknowledging),
/// cut off (every packet to and from its port dropped, so no FIN ever comes), and gone (connections
/// refused, retried with a growing wait). The publisher is `BusTestPeer publish` in its own
/// process: a `test.tick` every 50 ms, numbered by its envelope sequence.
@Suite struct SilentPublisherTests {
    /// Heartbeats quicker than the defaults (1 s, 5 s), so a test waits less for the verdict.
    static var quick: EventSubscriberOptions {
        var options = EventSubscriberOptions()
        options.heartbeatIntervalMs = 200
        options.heartbeatTimeoutMs = 800
        return options
    }

    @Test func frozenPublisherIsNoticedAndFollowedAgainAfterResume() async throws {
        let peer = try await PeerProcess("BusTestPeer", arguments: ["publish", "tcp://127.0.0.1:*"])
        let subscriber = try await EventSubscriber.connect(
            endpoints: [peer.endpoint], topics: ["test."], options: Self.quick, logger: testLogger())
        let ticks = Ticks(subscriber)
        try await ticks.waitForMore(than: 0, "the first ticks")
        try await waitForConnection(subscriber, up: true)

        peer.signal(SIGSTOP)
        try await waitUntilStopped(peer.process.processIdentifier)
        let frozen = ContinuousClock.now
        // Without heartbeats the connection stays up as long as the process stays stopped.
        try await waitForConnection(subscriber, up: false, "the heartbeat to mark the frozen publisher gone")
        let markedGone = ContinuousClock.now - frozen
        let seenWhileFrozen = ticks.received

        peer.signal(SIGCONT)
        let resumed = ContinuousClock.now
        try await ticks.waitForMore(than: seenWhileFrozen, "ticks after SIGCONT")
        let followedAgain = ContinuousClock.now - resumed
        try await waitForConnection(subscriber, up: true)
        print("RELIABILITY silent-publisher-sigstop marked-gone-after=\(markedGone) events-again-after-sigcont=\(followedAgain)")
        await subscriber.close()
        peer.kill()
    }

    @Test func publisherCutOffWithoutAFinIsNoticedAndReconnectedTo() async throws {
        guard await LoopbackBlackHole.isAvailable() else {
            Issue.record("iptables is needed (as root) to drop a publisher's packets")
            return
        }
        let peer = try await PeerProcess("BusTestPeer", arguments: ["publish", "tcp://127.0.0.1:*"])
        let port = try #require(peer.endpoint.split(separator: ":").last.map(String.init))
        let subscriber = try await EventSubscriber.connect(
            endpoints: [peer.endpoint], topics: ["test."], options: Self.quick, logger: testLogger())
        let ticks = Ticks(subscriber)
        try await ticks.waitForMore(than: 0, "the first ticks")
        try await waitForConnection(subscriber, up: true)

        let lift = try await LoopbackBlackHole.drop(port: port)
        let cut = ContinuousClock.now
        let markedGone: Duration
        let retried: Int
        do {
            try await waitForConnection(subscriber, up: false, "the heartbeat to mark the cut-off publisher gone")
            markedGone = ContinuousClock.now - cut
            // Reconnecting goes on while the packets are dropped: each SYN unanswered is given up
            // after the connect timeout and tried again.
            let before = subscriber.connectRetries
            try await withTimeout(.seconds(15), "a reconnect attempt to time out while cut off") {
                while subscriber.connectRetries == before { try await Task.sleep(for: .milliseconds(50)) }
            }
            retried = subscriber.connectRetries - before
        } catch {
            try await lift()
            throw error
        }
        let seenWhileCut = ticks.received
        try await lift()
        let restored = ContinuousClock.now
        try await ticks.waitForMore(than: seenWhileCut, "ticks after the packets flow again")
        let followedAgain = ContinuousClock.now - restored
        try await waitForConnection(subscriber, up: true)
        #expect(retried >= 1)
        print("RELIABILITY silent-publisher-blackhole marked-gone-after=\(markedGone) events-again-after-lift=\(followedAgain)")
        await subscriber.close()
        peer.kill()
    }

    @Test func gonePublisherIsRetriedWithAGrowingWaitAndFollowedWhenBack() async throws {
        let first = try await PeerProcess("BusTestPeer", arguments: ["publish", "tcp://127.0.0.1:*"])
        let endpoint = first.endpoint
        let subscriber = try await EventSubscriber.connect(endpoints: [endpoint], topics: ["test."], logger: testLogger())
        let ticks = Ticks(subscriber)
        try await ticks.waitForMore(than: 0, "the first ticks")

        first.kill()
        try await waitForConnection(subscriber, up: false, "the subscriber to see the publisher's connection closed")
        let before = subscriber.connectRetries
        try await Task.sleep(for: .seconds(5))
        let retries = subscriber.connectRetries - before
        // 100 ms doubling up to 2 s gives about 5 refused attempts in 5 s; a fixed 100 ms would give
        // about 45. A slower machine only makes fewer.
        #expect(retries >= 1 && retries <= 12, "\(retries) connection attempts in 5 s")

        let seenWhileGone = ticks.received
        let second = try await PeerProcess("BusTestPeer", arguments: ["publish", endpoint])
        let back = ContinuousClock.now
        try await ticks.waitForMore(than: seenWhileGone, "ticks from the publisher started again")
        print("RELIABILITY gone-publisher retries-in-5s=\(retries) events-again-after-restart=\(ContinuousClock.now - back)")
        await subscriber.close()
        second.kill()
    }

    func waitForConnection(_ subscriber: EventSubscriber, up: Bool, _ what: String = "the connection") async throws {
        try await withTimeout(.seconds(15), what) {
            while subscriber.isConnected != up { try await Task.sleep(for: .milliseconds(20)) }
        }
    }
}

/// Counts the ticks a subscriber delivers, in a task of its own.
private final class Ticks: Sendable {
    private final class Count: Sendable { let value = Atomic<Int>(0) }
    private let count: Count
    private let task: Task<Void, Never>

    init(_ subscriber: EventSubscriber) {
        // The consuming task holds only the count, never `self`.
        let count = Count()
        self.count = count
        task = Task { for await _ in subscriber { count.value.add(1, ordering: .relaxed) } }
    }

    var received: Int { count.value.load(ordering: .relaxed) }

    func waitForMore(than seen: Int, _ what: String) async throws {
        try await withTimeout(.seconds(15), what) {
            while self.received <= seen { try await Task.sleep(for: .milliseconds(20)) }
        }
    }

    deinit { task.cancel() }
}
