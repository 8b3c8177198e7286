import Bus
import Contracts
import Foundation
import TestSupport
import Testing

@testable import LegalService

/// Publishing and reading versions through the real handlers, store and PostgreSQL.
@Suite struct PublishAndReadTests {
    static let v2 = "# Privacy Policy\n\n## 1. Introduction\n\nVersion two.\n\n### Scope\n\nAll of it.\n"

    @Test func publishedVersionBecomesCurrentWithOutlineAndDigest() async throws {
        try await InProcessLegal.with(seeded: true) { legal in
            let seeded = try await legal.call(LegalCurrent.self, .init(type: .privacyPolicy))
            #expect(seeded.summary.version == "1.0")
            #expect(seeded.content == (try DefaultTexts.content(of: .privacyPolicy)))
            #expect(seeded.outline.filter { $0.level == 2 }.count == 12)

            let published = try await legal.publish(.privacyPolicy, "2.0", Self.v2, material: false)
            #expect(published.digest == PublishValidation.digest(of: Self.v2))
            #expect(published.effectiveAt == published.publishedAt)
            // "Last Updated" is the instant of publication (whole seconds), not midnight UTC of a day.
            #expect(published.lastUpdated == Date(timeIntervalSince1970: published.publishedAt.timeIntervalSince1970.rounded(.down)))
            #expect(!published.material)

            let current = try await legal.call(LegalCurrent.self, .init(type: .privacyPolicy))
            #expect(current.summary == published)
            #expect(current.content == Self.v2)
            #expect(
                current.outline == [
                    LegalOutlineEntry(level: 2, title: "1. Introduction", anchor: "1-introduction"),
                    LegalOutlineEntry(level: 3, title: "Scope", anchor: "scope"),
                ])
            // The other type is untouched.
            #expect(try await legal.call(LegalCurrent.self, .init(type: .termsOfService)).summary.version == "2025-12-12")
        }
    }

    @Test func futureVersionTakesEffectOnlyAtItsTime() async throws {
        try await InProcessLegal.with(seeded: true) { legal in
            let effectiveAt = Milliseconds.truncate(Date().addingTimeInterval(2))
            let lastUpdated = Date(timeIntervalSince1970: 1_780_000_000)
            let scheduled = try await legal.publish(
                .termsOfService, "1.1", "# Terms\n\n## 1. New\n", lastUpdated: lastUpdated, effectiveAt: effectiveAt)
            #expect(Milliseconds.same(scheduled.effectiveAt, effectiveAt))
            #expect(scheduled.lastUpdated == lastUpdated)

            // Asked "as of" a time, the answer is exact to the millisecond.
            #expect(try await legal.call(LegalCurrent.self, .init(type: .termsOfService, at: effectiveAt)).summary.version == "1.1")
            let justBefore = effectiveAt.addingTimeInterval(-0.001)
            #expect(try await legal.call(LegalCurrent.self, .init(type: .termsOfService, at: justBefore)).summary.version == "2025-12-12")
            // History lists it already, first (latest effectiveAt).
            #expect(try await legal.call(LegalHistory.self, .init(type: .termsOfService)).versions.map(\.version) == ["1.1", "2025-12-12"])

            // Live: the old version answers until effectiveAt, the new one from then on. The
            // server's clock is read between sending and receiving, so an old answer must have
            // been asked for before effectiveAt and a new one received after it; that holds
            // however slow the machine is.
            let client = legal.client
            let polls = try await withTimeout(.seconds(15), "the scheduled version to take effect") {
                var polls: [(sent: Date, received: Date, version: String)] = []
                while polls.last?.version != "1.1" {
                    let sent = Date()
                    let current = try await client.call(LegalCurrent.self, .init(type: .termsOfService), timeout: .seconds(10))
                    polls.append((sent, Date(), current.summary.version))
                    try await Task.sleep(for: .milliseconds(50))
                }
                return polls
            }
            for poll in polls {
                if poll.version == "2025-12-12" { #expect(poll.sent < effectiveAt) } else { #expect(poll.received >= effectiveAt) }
            }
            #expect(Set(polls.map(\.version)) == ["2025-12-12", "1.1"] || polls[0].sent >= effectiveAt, "never saw the old version")
            let firstNew = polls.firstIndex { $0.version == "1.1" } ?? polls.endIndex
            #expect(polls[firstNew...].allSatisfy { $0.version == "1.1" }, "once new, never old again")
        }
    }

    @Test func historyVersionsAndLookupByVersion() async throws {
        try await InProcessLegal.with { legal in
            // Nothing published yet: no current version, empty lists.
            #expect(await legal.errorCode(LegalCurrent.self, .init(type: .privacyPolicy)) == .notFound)
            #expect(try await legal.call(LegalHistory.self, .init(type: .privacyPolicy)).versions.isEmpty)
            #expect(try await legal.call(LegalAllVersions.self, Empty()).versions.isEmpty)

            let now = Date()
            let a = try await legal.publish(.privacyPolicy, "1.0", "# A\n")
            let c = try await legal.publish(.privacyPolicy, "3.0", "# C\n", effectiveAt: now.addingTimeInterval(7200))
            let b = try await legal.publish(.privacyPolicy, "2.0", "# B\n", effectiveAt: now.addingTimeInterval(3600))
            let t = try await legal.publish(.termsOfService, "1.0", "# T\n")

            #expect(try await legal.call(LegalHistory.self, .init(type: .privacyPolicy)).versions == [c, b, a])
            #expect(try await legal.call(LegalHistory.self, .init(type: .termsOfService)).versions == [t])
            #expect(try await legal.call(LegalAllVersions.self, Empty()).versions == [a, c, b, t])

            let found = try await legal.call(LegalVersion.self, .init(type: .privacyPolicy, version: "2.0"))
            #expect(found.summary == b)
            #expect(found.content == "# B\n")
            #expect(await legal.errorCode(LegalVersion.self, .init(type: .privacyPolicy, version: "9.9")) == .notFound)
            #expect(await legal.errorCode(LegalVersion.self, .init(type: .termsOfService, version: "2.0")) == .notFound)
            #expect(await legal.errorCode(LegalVersion.self, .init(type: .privacyPolicy, version: "../etc")) == .invalidArgument)
            // Before the first version took effect, nothing was current.
            #expect(await legal.errorCode(LegalCurrent.self, .init(type: .privacyPolicy, at: a.effectiveAt.addingTimeInterval(-1))) == .notFound)
        }
    }

    @Test func republishingTheSameVersionIsIdempotentAndAnythingElseConflicts() async throws {
        try await InProcessLegal.with { legal in
            let effectiveAt = Date().addingTimeInterval(600)
            let first = try await legal.publish(.termsOfService, "2.0", "# Terms v2\n", effectiveAt: effectiveAt)
            // A retry (a new idempotency key each call): the same version comes back, nothing new is written.
            #expect(try await legal.publish(.termsOfService, "2.0", "# Terms v2\n", effectiveAt: effectiveAt) == first)
            #expect(try await legal.publish(.termsOfService, "2.0", "# Terms v2\n") == first, "dates left out match")
            #expect(try await legal.counts() == .init(versions: 1, events: 1))

            let conflicts: [LegalPublish.Request] = [
                .init(type: .termsOfService, version: "2.0", content: "# Terms v2, edited\n", material: true),
                .init(type: .termsOfService, version: "2.0", content: "# Terms v2\n", material: false),
                .init(type: .termsOfService, version: "2.0", content: "# Terms v2\n", effectiveAt: effectiveAt.addingTimeInterval(1), material: true),
                .init(type: .termsOfService, version: "2.0", content: "# Terms v2\n", lastUpdated: Date(timeIntervalSince1970: 0), material: true),
            ]
            for request in conflicts {
                #expect(await legal.errorCode(LegalPublish.self, request, principal: InProcessLegal.operatorPrincipal) == .conflict)
            }
            // The same version string for the other type is a different document.
            _ = try await legal.publish(.privacyPolicy, "2.0", "# Privacy v2\n")
            #expect(try await legal.counts() == .init(versions: 2, events: 2))
        }
    }

    @Test func concurrentPublishesOfOneVersionCreateItOnce() async throws {
        try await InProcessLegal.with { legal in
            let results = try await withThrowingTaskGroup(of: LegalVersionSummary.self) { group in
                for _ in 0..<8 { group.addTask { try await legal.publish(.privacyPolicy, "5.0", "# Same\n") } }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(Set(results.map(\.publishedAt)).count == 1)
            #expect(try await legal.counts() == .init(versions: 1, events: 1))
        }
    }
}
