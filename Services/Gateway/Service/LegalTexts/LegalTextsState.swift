import Contracts
import Foundation
import ServiceKit

/// What the gateway's cache of the legal texts knows, as plain values without any I/O (so its
/// rules are unit-tested on their own): the versions held per document type, which of them is in
/// effect at a given time, and the sequence number of the last Legal event applied, to notice one
/// that pub/sub lost.
///
/// Per type it holds the version in effect and every version published for a later date: when
/// such a date passes, the next read switches to that version by itself (the rule of
/// ``LegalVersionSummary/inEffect(_:at:summary:)``, the one `legal.current` answers by), even
/// while Legal is unreachable. Versions that can no longer come into effect are dropped.
package struct LegalTextsState: Sendable {
    private var held: [LegalDocumentType: [LegalText]] = [:]
    /// Every published version of each type (summaries only), as the last revalidation listed them
    /// plus the events since: what the enforcement of the terms judges an acceptance against.
    private(set) var histories: [LegalDocumentType: [LegalVersionSummary]] = [:]
    private var inEffect: [LegalDocumentType: LegalText] = [:]
    /// The earliest `effectiveAt` of a held version not yet in effect: when reads must decide again.
    private(set) var nextChange: Date?
    /// Bumped whenever the version in effect of a type changes (what memoised responses key on).
    private(set) var generation = 0
    /// The sequence number of the last Legal event applied or covered by a revalidation.
    private(set) var lastSequence: Int64?
    /// Whether the last revalidation succeeded and Legal has stayed reachable since; cleared when
    /// it fails or the connection drops, so responses are marked stale.
    var confirmed = false

    /// The version of `type` in effect at `now`, switching first if a held version took effect.
    mutating func current(_ type: LegalDocumentType, at now: Date) -> LegalText? {
        if let nextChange, now >= nextChange { decide(at: now) }
        return inEffect[type]
    }

    /// The version string in effect per type as last decided (for logs).
    var versionsInEffect: [LegalDocumentType: String] { inEffect.mapValues(\.summary.version) }

    /// Every held version of `type` (the one in effect and those published for later).
    func versions(of type: LegalDocumentType) -> [LegalText] { held[type] ?? [] }

    /// The held text of `summary`'s version, if the same content is held.
    func text(for summary: LegalVersionSummary) -> LegalText? {
        held[summary.type]?.first { $0.isVersion(of: summary) }
    }

    /// The versions of a revalidation's history to hold: the one in effect at `now` and every one
    /// published for a later time.
    static func wanted(_ history: [LegalVersionSummary], at now: Date) -> [LegalVersionSummary] {
        let current = LegalVersionSummary.inEffect(history, at: now)
        return history.filter { $0 == current || $0.effectiveAt > now }
    }

    /// Adds one version (from a `legal.published` event), replacing a held one of the same version.
    mutating func add(_ text: LegalText, at now: Date) {
        let type = text.summary.type
        if histories[type] != nil {
            histories[type]!.removeAll { $0.version == text.summary.version }
            histories[type]!.append(text.summary)
        }
        held[type, default: []].removeAll { $0.summary.version == text.summary.version }
        held[type, default: []].append(text)
        decide(at: now)
    }

    /// Holds exactly `texts` per type (a revalidation's result) and resumes the sequence after
    /// `latestSequence`, the last event Legal had published when the revalidation began.
    /// `histories` are the types' complete lists of versions the texts were chosen from.
    mutating func replace(
        with texts: [LegalDocumentType: [LegalText]], histories: [LegalDocumentType: [LegalVersionSummary]] = [:], latestSequence: Int64,
        at now: Date
    ) {
        for (type, versions) in texts { held[type] = versions }
        for (type, versions) in histories { self.histories[type] = versions }
        lastSequence = latestSequence
        confirmed = true
        decide(at: now)
    }

    /// Checks a live event's sequence number against the last one applied and records it.
    /// Without a number, or before any revalidation gave one to compare with, it is a gap.
    mutating func observe(sequence: Int64?) -> EventOrder {
        guard let sequence else { return .gap }
        let order = EventOrder(sequence, after: lastSequence)
        if order != .seen, lastSequence != nil { lastSequence = sequence }
        return order
    }

    /// Works out the version in effect per type at `now`, drops versions superseded for good, and
    /// notes when the next held version takes effect.
    private mutating func decide(at now: Date) {
        var next: Date?
        for (type, versions) in held {
            let current = LegalVersionSummary.inEffect(versions, at: now) { $0.summary }
            let kept = versions.filter { $0 === current || $0.summary.effectiveAt > now }
            held[type] = kept
            for text in kept where text.summary.effectiveAt > now {
                next = min(next ?? text.summary.effectiveAt, text.summary.effectiveAt)
            }
            if current !== inEffect[type] {
                inEffect[type] = current
                generation += 1
            }
        }
        nextChange = next
    }
}
