import Bus
import Contracts
import Foundation
import Hummingbird
import Locks
import Metrics

/// The gateway's in-memory copy of the legal texts in effect, shared by every route that reads
/// them (`/api/terms`, `/api/legal/{type}`, its outline, `/legal/privacy`, `/legal/terms`, and a
/// route module's reads, as the Supabase module's `/rest/v1/legal_documents`). ``LegalTextsFollower`` keeps it current from Legal's
/// `legal.published` events and periodic revalidation; routes only read it.
///
/// A read is a hit once the first revalidation succeeded; until then (and for a type Legal has no
/// version of) the route asks Legal as it did before the cache existed, so it answers `503` when
/// Legal is down then, exactly as before. After that, while Legal is unreachable or the last
/// revalidation failed, the texts held are still served, marked stale (``LegalResponses``).
public final class LegalTexts: Sendable {
    /// A text in effect and whether it could not be confirmed with Legal lately.
    struct Hit: Sendable {
        let text: LegalText
        let stale: Bool
    }

    /// The texts of every document type in effect, for reads that combine them (a table of them;
    /// ``generation`` tells a reader when answers it derived from them are out of date).
    package struct Snapshot: Sendable {
        package let texts: [LegalText]
        package let generation: Int
        package let stale: Bool
    }

    private let state = LockedValue(LegalTextsState())
    private let isLegalConnected: @Sendable () -> Bool
    private let hits = Counter(label: "gateway_legal_cache_reads_total", dimensions: [("result", "hit")])
    private let misses = Counter(label: "gateway_legal_cache_reads_total", dimensions: [("result", "miss")])

    /// `isLegalConnected` says whether the gateway's bus connection to Legal is up now: while it
    /// is not, hits are stale.
    public init(isLegalConnected: @escaping @Sendable () -> Bool = { false }) {
        self.isLegalConnected = isLegalConnected
    }

    // MARK: Reads (routes)

    /// The text of `type` in effect now, if the cache holds it.
    func current(_ type: LegalDocumentType) -> Hit? {
        let found = state.withLock { state in state.current(type, at: Date()).map { ($0, state.confirmed) } }
        guard let (text, confirmed) = found else {
            misses.increment()
            return nil
        }
        hits.increment()
        return Hit(text: text, stale: !confirmed || !isLegalConnected())
    }

    /// The text of `type` in effect now: from the cache, or (before it is loaded) from Legal.
    func current(_ type: LegalDocumentType, services: ServiceClients, context: GatewayContext) async throws -> Hit {
        if let hit = current(type) { return hit }
        let document = try await services.call(.legal, LegalCurrent.self, .init(type: type), principal: .anonymous, context: context)
        return Hit(text: try LegalText(document), stale: false)
    }

    /// The texts in effect of every type, when the cache holds them all.
    package func snapshot() -> Snapshot? {
        let now = Date()
        let found = state.withLock { state -> ([LegalText], Int, Bool)? in
            var texts: [LegalText] = []
            for type in LegalDocumentType.allCases {
                guard let text = state.current(type, at: now) else { return nil }
                texts.append(text)
            }
            return (texts, state.generation, state.confirmed)
        }
        guard let (texts, generation, confirmed) = found else {
            misses.increment()
            return nil
        }
        hits.increment()
        return Snapshot(texts: texts, generation: generation, stale: !confirmed || !isLegalConnected())
    }

    /// Every published version of `type` (summaries), once a revalidation listed them; nil before.
    /// Kept through an outage of Legal, like the texts.
    func versions(of type: LegalDocumentType) -> [LegalVersionSummary]? {
        state.withLock { $0.histories[type] }
    }

    // MARK: Updates (the follower)

    /// Runs `body` on the state under the lock.
    func update<T: Sendable>(_ body: (inout LegalTextsState) -> T) -> T {
        state.withLock { body(&$0) }
    }

    /// A copy of the state, for decisions outside the lock.
    var currentState: LegalTextsState { state.withLock { $0 } }
}
