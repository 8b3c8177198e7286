import Foundation

/// Which published version of a document is in effect at a given time: the rule `legal.current`
/// answers by, for consumers that hold versions themselves (the gateway's cache of the texts).
///
/// The version in effect is the one with the latest `effectiveAt` not after that time; among
/// versions taking effect at the same instant, the one published last. Legal's store applies the
/// same order in SQL (`effective_at DESC`, then publication order); a test in `LegalTests` checks
/// that the two agree. A version published for a later date takes over when that date comes,
/// without any further event.
extension LegalVersionSummary {
    /// Whether this version wins over `other` once both are in effect: it takes effect later, or
    /// at the same instant but was published later.
    public func supersedes(_ other: LegalVersionSummary) -> Bool {
        effectiveAt != other.effectiveAt ? effectiveAt > other.effectiveAt : publishedAt > other.publishedAt
    }

    /// The element of `items` whose summary is in effect at `date`, or nil when none is yet.
    public static func inEffect<Items: Sequence>(
        _ items: Items, at date: Date, summary: (Items.Element) -> LegalVersionSummary
    ) -> Items.Element? {
        var best: Items.Element?
        for item in items where summary(item).effectiveAt <= date {
            if let chosen = best, !summary(item).supersedes(summary(chosen)) { continue }
            best = item
        }
        return best
    }

    /// The version of `versions` in effect at `date` (all of one document type), or nil.
    public static func inEffect(_ versions: some Sequence<LegalVersionSummary>, at date: Date) -> LegalVersionSummary? {
        inEffect(versions, at: date) { $0 }
    }
}
