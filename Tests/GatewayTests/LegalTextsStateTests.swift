import Contracts
import Foundation
import ServiceKit
import Testing

@testable import GatewayService
@testable import GatewaySupabase

/// The rules of the gateway's copy of the legal texts, without I/O: which held version is in
/// effect when, what a revalidation keeps, and how an event's sequence number shows a lost one.
struct LegalTextsStateTests {
    static let start = Date(timeIntervalSince1970: 1_800_000_000)

    /// A terms version taking effect `effective` seconds after ``start``, published `published`
    /// seconds after it.
    static func text(_ version: String, effective: TimeInterval, published: TimeInterval? = nil, type: LegalDocumentType = .termsOfService) throws
        -> LegalText
    {
        let content = "# Terms \(version)\n\n## 1. Section\n\nText of \(version).\n"
        let summary = LegalVersionSummary(
            type: type, version: version, lastUpdated: start, publishedAt: start.addingTimeInterval(published ?? min(effective, 0)),
            effectiveAt: start.addingTimeInterval(effective), digest: "digest-\(version)", material: true)
        return try LegalText(LegalDocument(summary: summary, content: content, outline: []))
    }

    static func at(_ seconds: TimeInterval) -> Date { start.addingTimeInterval(seconds) }

    @Test func aVersionPublishedForLaterTakesOverAtItsTimeAndTheOldOneIsDropped() throws {
        let (old, next) = (try Self.text("1.0", effective: -60), try Self.text("2.0", effective: 10, published: -5))
        var state = LegalTextsState()
        state.replace(with: [.termsOfService: [old, next]], latestSequence: 3, at: Self.at(0))
        #expect(state.confirmed && state.lastSequence == 3)
        #expect(state.current(.termsOfService, at: Self.at(0)) === old)
        #expect(state.nextChange == Self.at(10))
        let generation = state.generation
        #expect(state.current(.termsOfService, at: Self.at(9.999)) === old)
        #expect(state.current(.termsOfService, at: Self.at(10)) === next)
        #expect(state.generation == generation + 1 && state.nextChange == nil)
        #expect(state.versions(of: .termsOfService).map(\.summary.version) == ["2.0"])
        #expect(state.current(.privacyPolicy, at: Self.at(10)) == nil)
    }

    /// The terms enforcement judges acceptances against every published version, superseded ones
    /// included: the revalidation's history, plus each version an event adds.
    @Test func theHistoryKeepsSupersededVersionsForTheTermsEnforcement() throws {
        let (old, current, added) = (try Self.text("1.0", effective: -60), try Self.text("2.0", effective: -10), try Self.text("3.0", effective: 0))
        var state = LegalTextsState()
        #expect(state.histories[.termsOfService] == nil)
        state.add(added, at: Self.at(0))
        #expect(state.histories[.termsOfService] == nil, "an event before the first revalidation gives no complete history")
        state.replace(
            with: [.termsOfService: [current]], histories: [.termsOfService: [old.summary, current.summary]], latestSequence: 2, at: Self.at(0))
        #expect(state.versions(of: .termsOfService).map(\.summary.version) == ["2.0"])
        #expect(state.histories[.termsOfService]?.map(\.version) == ["1.0", "2.0"])
        state.add(added, at: Self.at(0))
        state.add(added, at: Self.at(0))
        #expect(state.histories[.termsOfService]?.map(\.version) == ["1.0", "2.0", "3.0"])
    }

    @Test func onATieTheLaterPublicationWins() throws {
        let first = try Self.text("a", effective: 5, published: -10)
        let second = try Self.text("b", effective: 5, published: -9)
        var state = LegalTextsState()
        state.replace(with: [.termsOfService: [second, first, try Self.text("0", effective: -100)]], latestSequence: 1, at: Self.at(0))
        #expect(state.current(.termsOfService, at: Self.at(5))?.summary.version == "b")
        #expect(LegalVersionSummary.inEffect([first.summary, second.summary], at: Self.at(5))?.version == "b")
        #expect(LegalVersionSummary.inEffect([first.summary, second.summary], at: Self.at(4)) == nil)
        #expect(second.summary.supersedes(first.summary) && !first.summary.supersedes(second.summary))
    }

    @Test func aRevalidationKeepsTheVersionInEffectAndLaterOnesOnly() throws {
        let history = try [Self.text("3", effective: 50), Self.text("2", effective: -1), Self.text("1", effective: -100)].map(\.summary)
        #expect(LegalTextsState.wanted(history, at: Self.at(0)).map(\.version) == ["3", "2"])
        #expect(LegalTextsState.wanted(history, at: Self.at(50)).map(\.version) == ["3"])
        #expect(LegalTextsState.wanted(history, at: Self.at(-200)).map(\.version) == ["3", "2", "1"])
        #expect(LegalTextsState.wanted([], at: Self.at(0)).isEmpty)
    }

    @Test func anEventAddsItsVersionAndAnEmptyHistoryEmptiesTheType() throws {
        var state = LegalTextsState()
        #expect(state.current(.termsOfService, at: Self.at(0)) == nil)
        let old = try Self.text("1.0", effective: -60)
        state.replace(with: [.termsOfService: [old]], latestSequence: 1, at: Self.at(0))
        let published = try Self.text("1.1", effective: 1)
        state.add(published, at: Self.at(0))
        #expect(state.current(.termsOfService, at: Self.at(0)) === old)
        #expect(state.text(for: published.summary) === published)
        #expect(state.current(.termsOfService, at: Self.at(2)) === published)
        // The same version string with other content is not "held".
        var changed = published.summary
        changed.digest = "other"
        #expect(state.text(for: changed) == nil)
        state.replace(with: [.termsOfService: []], latestSequence: 2, at: Self.at(3))
        #expect(state.current(.termsOfService, at: Self.at(3)) == nil)
    }

    @Test func sequenceNumbersRevealALostEvent() {
        var state = LegalTextsState()
        // Nothing to compare with before a revalidation: the first event asks for one.
        #expect(state.observe(sequence: 7) == .gap)
        state.replace(with: [:], latestSequence: 5, at: Self.at(0))
        #expect(state.observe(sequence: 5) == .seen)
        #expect(state.observe(sequence: 4) == .seen)
        #expect(state.observe(sequence: 6) == .next)
        #expect(state.observe(sequence: 8) == .gap)
        #expect(state.lastSequence == 8)
        #expect(state.observe(sequence: 7) == .seen)
        #expect(state.observe(sequence: 9) == .next)
        #expect(state.observe(sequence: nil) == .gap)
        // A revalidation restarts the count at Legal's latest (also after Legal's outbox restarted).
        state.replace(with: [:], latestSequence: 2, at: Self.at(0))
        #expect(state.observe(sequence: 3) == .next)
    }

    @Test func readyBodiesAreWhatTheRoutesUsedToEncode() throws {
        let text = try Self.text("1.0", effective: 0)
        let seed = try JSONSerialization.jsonObject(with: Data(text.seedJSON.readableBytesView)) as? [String: String]
        #expect(seed == ["content": text.document.content, "version": "1.0"])
        #expect(String(decoding: Data(text.seedJSON.readableBytesView), as: UTF8.self).hasPrefix("{\"content\":"))
        let document = try JSONSerialization.jsonObject(with: Data(text.documentJSON.readableBytesView)) as? [String: Any]
        #expect((document?["summary"] as? [String: Any])?["digest"] as? String == "digest-1.0")
        #expect(text.entityTag == "\"digest-1.0\"")
        #expect(String(decoding: Data(text.page.readableBytesView), as: UTF8.self).contains("<h1>Terms 1.0</h1>"))
    }
}

/// The PostgREST reads' memory of anon keys that passed their check.
struct VerifiedAnonymousKeysTests {
    @Test func onlyRememberedKeysPassAndOnlyForASecond() {
        let keys = VerifiedAnonymousKeys()
        let now = ContinuousClock.now
        #expect(!keys.contains("a.b.c", now: now))
        keys.remember("a.b.c", now: now)
        #expect(keys.contains("a.b.c", now: now + .milliseconds(999)))
        #expect(!keys.contains("a.b.d", now: now))
        #expect(!keys.contains("a.b.c", now: now + .seconds(1)))
        // Full: nothing more is kept until entries expire.
        for index in 0..<VerifiedAnonymousKeys.capacity { keys.remember("key\(index)", now: now) }
        keys.remember("late", now: now)
        #expect(!keys.contains("late", now: now))
        keys.remember("later", now: now + .seconds(2))
        #expect(keys.contains("later", now: now + .seconds(2)))
    }
}
