import Bus
import Contracts
import Foundation
import TestSupport
import Testing

@testable import LegalService

/// Seeding the default texts, and the `legal.published` events every publish emits.
@Suite struct SeedingAndEventsTests {
    @Test func seedingPublishesEachDefaultOnceWithItsEvent() async throws {
        try await InProcessLegal.with { legal in
            let seeder = LegalSeeder(store: legal.store, outbox: legal.outbox, logger: testLogger())
            let seeded = try await seeder.seedDefaults()
            #expect(seeded.map(\.type) == [.privacyPolicy, .termsOfService])
            #expect(seeded.allSatisfy { $0.version == DefaultTexts.version(of: $0.type) && $0.material })
            // "Last Updated" is the instant the texts were published, to the second.
            #expect(seeded.allSatisfy { $0.lastUpdated <= $0.publishedAt && $0.publishedAt.timeIntervalSince($0.lastUpdated) < 1 })
            #expect(seeded.allSatisfy { $0.lastUpdated.timeIntervalSince1970 == $0.lastUpdated.timeIntervalSince1970.rounded(.down) })
            #expect(try await seeder.seedDefaults().isEmpty, "a restart seeds nothing")
            #expect(try await legal.counts() == .init(versions: 2, events: 2))

            for summary in seeded {
                let current = try await legal.call(LegalCurrent.self, .init(type: summary.type))
                #expect(try wire(current.summary) == wire(summary))
                #expect(current.content == (try DefaultTexts.content(of: summary.type)))
                #expect(current.summary.digest == PublishValidation.digest(of: current.content))
            }
            try await legal.relay()
            let events = try await legal.eventsSince()
            #expect(events.map(\.type) == [LegalEvents.published, LegalEvents.published])
            #expect(events.map(\.sequence) == [1, 2])
            #expect(try wire(events.map { try $0.decodePayload(LegalVersionSummary.self) }) == wire(seeded))
        }
    }

    @Test func concurrentSeedersSeedOnce() async throws {
        try await InProcessLegal.with { legal in
            let (store, outbox) = (legal.store, legal.outbox)
            let total = try await withThrowingTaskGroup(of: Int.self) { group in
                for _ in 0..<4 {
                    group.addTask { try await LegalSeeder(store: store, outbox: outbox, logger: testLogger()).seedDefaults().count }
                }
                return try await group.reduce(0, +)
            }
            #expect(total == 2)
            #expect(try await legal.counts() == .init(versions: 2, events: 2))
        }
    }

    @Test func seedingLeavesATypeAnOperatorAlreadyPublishedAlone() async throws {
        try await InProcessLegal.with { legal in
            let operatorTerms = try await legal.publish(.termsOfService, "1.0", "# Operator terms\n")
            let seeded = try await LegalSeeder(store: legal.store, outbox: legal.outbox, logger: testLogger()).seedDefaults()
            #expect(seeded.map(\.type) == [.privacyPolicy])
            #expect(try await legal.call(LegalCurrent.self, .init(type: .termsOfService)).summary == operatorTerms)
            #expect(try await legal.counts() == .init(versions: 2, events: 2))
        }
    }

    @Test func publishEmitsOneEventDeliveredLiveAndByCatchUp() async throws {
        try await InProcessLegal.with(seeded: true) { legal in
            try await legal.relay()
            let subscriber = try await EventSubscriber.connect(
                endpoints: legal.publisher.boundEndpoints, topics: [LegalEvents.published], logger: testLogger())
            try await withTimeout(.seconds(10), "subscription") {
                while !subscriber.isConnected { try await Task.sleep(for: .milliseconds(20)) }
            }
            // A PUB socket drops events until the subscription has reached it, a moment after the
            // connection is up (the outbox catch-up, checked below, is what guarantees delivery).
            try await Task.sleep(for: .milliseconds(200))

            let published = try await legal.publish(.privacyPolicy, "2.0", "# Privacy v2\n", material: false)
            #expect(try await legal.counts() == .init(versions: 3, events: 3))
            #expect(try await legal.relay() == 1)
            // The seeded events were handed to the PUB socket's thread before subscribing, but it
            // may send them only now: skip them.
            let received = try await withTimeout(.seconds(10), "the legal.published event") { () -> ReceivedEvent? in
                for await event in subscriber where event.envelope.sequence == 3 { return event }
                return nil
            }
            #expect(received?.topic == LegalEvents.published)
            #expect(received?.envelope.sequence == 3)
            #expect(try received?.envelope.decodePayload(LegalVersionSummary.self) == published)

            let caughtUp = try await legal.eventsSince(2)
            #expect(caughtUp.count == 1)
            #expect(try caughtUp.first?.decodePayload(LegalVersionSummary.self) == published)

            // An idempotent repeat and a refused publish emit nothing.
            _ = try await legal.publish(.privacyPolicy, "2.0", "# Privacy v2\n", material: false)
            _ = await legal.errorCode(
                LegalPublish.self, .init(type: .privacyPolicy, version: "2.0", content: "# Other\n", material: false),
                principal: InProcessLegal.operatorPrincipal)
            #expect(try await legal.relay() == 0)
            #expect(try await legal.eventsSince(3).isEmpty)
            await subscriber.close()
        }
    }
}
