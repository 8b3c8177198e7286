import Bus
import Contracts
import Foundation
import TestSupport
import Testing

@testable import LegalService

/// The real `Legal` executable: first start seeds, restarts and twin instances do not seed again,
/// and publishing reaches subscribers live and through `legal.events.since`.
@Suite(.serialized) struct LegalProcessTests {
    @Test func firstStartSeedsAndARestartSeedsNothing() async throws {
        try await TestDatabase.withDatabase { database in
            let url = database.url
            let first = try await LegalProcess.start(databaseURL: url)
            let seeded = try await first.call(LegalAllVersions.self, Empty()).versions
            #expect(seeded.map(\.type) == [.privacyPolicy, .termsOfService])
            #expect(seeded.map(\.version) == ["1.0", "2025-12-12"])
            let seededEvents = try await first.events(count: 2)
            #expect(try wire(seededEvents.map { try $0.decodePayload(LegalVersionSummary.self) }) == wire(seeded))
            let privacy = try await first.call(LegalCurrent.self, .init(type: .privacyPolicy))
            #expect(privacy.content == (try DefaultTexts.content(of: .privacyPolicy)))
            #expect(privacy.outline.filter { $0.level == 2 }.last?.title == "12. Contact Us")
            #expect(await first.stop() == 0, "output:\n\(first.process.output)")

            let second = try await LegalProcess.start(databaseURL: url)
            #expect(try await second.call(LegalAllVersions.self, Empty()).versions == seeded)
            #expect(!second.process.output.contains("seeded default legal text"), "output:\n\(second.process.output)")
            let terms = try await second.call(LegalCurrent.self, .init(type: .termsOfService))
            #expect(terms.outline.filter { $0.level == 2 }.count == 11)
            #expect(await second.stop() == 0, "output:\n\(second.process.output)")
            #expect(try await database.count("legal.versions") == 2)
            #expect(try await database.count("legal.outbox") == 2)
        }
    }

    @Test func twoInstancesStartingTogetherSeedOnce() async throws {
        try await TestDatabase.withDatabase { database in
            let url = database.url
            async let a = LegalProcess.start(databaseURL: url)
            async let b = LegalProcess.start(databaseURL: url)
            let (one, two) = try await (a, b)
            let versions = try await one.call(LegalAllVersions.self, Empty()).versions
            #expect(versions.count == 2)
            #expect(try await two.call(LegalAllVersions.self, Empty()).versions == versions)
            #expect(try await one.events(count: 2).count == 2)
            #expect(try await database.count("legal.versions") == 2)
            #expect(try await database.count("legal.outbox") == 2)
            let seededBy = [one, two].filter { $0.process.output.contains("seeded default legal text") }
            #expect(seededBy.count == 1, "exactly one instance seeds")
            #expect(await one.stop() == 0)
            #expect(await two.stop() == 0)
        }
    }

    @Test func publishReachesSubscribersAndEventsSince() async throws {
        try await TestDatabase.withDatabase { database in
            let url = database.url
            let legal = try await LegalProcess.start(databaseURL: url)
            _ = try await legal.events(count: 2)
            let subscriber = try await EventSubscriber.connect(endpoints: [legal.events], topics: ["legal."], logger: testLogger())
            try await withTimeout(.seconds(10), "subscription") {
                while !subscriber.isConnected { try await Task.sleep(for: .milliseconds(20)) }
            }
            // A PUB socket drops events until the subscription has reached it, a moment after
            // the connection is up; events.since below is what guarantees delivery.
            try await Task.sleep(for: .milliseconds(200))

            let content = "# Terms and Conditions\n\n## 1. Agreement to Terms\n\nUpdated.\n"
            let request = LegalPublish.Request(type: .termsOfService, version: "1.1", content: content, material: true)
            let forbidden = await #expect(throws: BusError.self) {
                try await legal.client.call(LegalPublish.self, request, principal: .user("someone"), timeout: .seconds(10))
            }
            #expect(forbidden?.code == .forbidden)
            let published = try await legal.call(LegalPublish.self, request, principal: .operator("ops"))

            let received = try await withTimeout(.seconds(10), "the legal.published event") { () -> ReceivedEvent? in
                for await event in subscriber where event.envelope.sequence == 3 { return event }
                return nil
            }
            #expect(received?.topic == LegalEvents.published)
            #expect(try received?.envelope.decodePayload(LegalVersionSummary.self) == published)
            let all = try await legal.events(count: 3)
            #expect(all.map(\.sequence) == [1, 2, 3])
            #expect(try all.last?.decodePayload(LegalVersionSummary.self) == published)

            let current = try await legal.call(LegalCurrent.self, .init(type: .termsOfService))
            #expect(current.summary == published)
            #expect(current.outline.map(\.anchor) == ["1-agreement-to-terms"])
            let unknownType = Envelope(kind: .request, type: LegalCurrent.type, payload: Data(#"{"type":"cookie_policy"}"#.utf8))
            #expect(try await legal.client.send(unknownType, timeout: .seconds(10)).envelope.error?.code == .invalidArgument)

            await subscriber.close()
            #expect(await legal.stop() == 0, "output:\n\(legal.process.output)")
        }
    }
}
