import Bus
import Contracts
import Foundation
import Locks

/// The terms of service versions Legal has published, held in memory so that an acceptance does
/// not ask Legal which version is in effect on every call (`legal.current` answers the whole text).
///
/// Loaded from `legal.history` (summaries only, future versions included) on first use, kept up to
/// date by `legal.published` events (``TermsCatalogFollower``) and reloaded every few seconds in case
/// an event was lost. The version in effect is worked out at each call from the versions'
/// `effectiveAt` by Legal's own rule (``LegalVersionSummary/inEffect(_:at:)``), so a version
/// published for a later date takes over on time without any event. A version the catalog does not
/// hold as current is checked with Legal itself before it is refused, so a client that accepts a
/// version the moment it is published is not refused while the event is on its way.
final class TermsCatalog: Sendable {
    private struct State {
        var versions: [String: LegalVersionSummary] = [:]
        var loaded = false
    }
    private let state = LockedValue(State())
    private let legal: @Sendable () async throws -> RPCClient

    init(legal: @escaping @Sendable () async throws -> RPCClient) {
        self.legal = legal
    }

    /// The version in effect at `now` as far as the catalog knows; nil before the first load.
    func cachedCurrent(at now: Date = Date()) -> String? {
        state.withLock { state -> String? in
            guard state.loaded else { return nil }
            return LegalVersionSummary.inEffect(state.versions.values, at: now)?.version
        }
    }

    /// The version in effect now. When it is not `expected` in the catalog's view, Legal is asked,
    /// and its answer stands: a refusal is never based on the cache alone.
    func current(expecting expected: String?) async throws -> String {
        if cachedCurrent() == nil { try? await reload() }
        if let cached = cachedCurrent(), cached == expected { return cached }
        do {
            let summary = try await legal().call(LegalCurrent.self, .init(type: .termsOfService)).summary
            remember(summary)
            return summary.version
        } catch let error as BusError where error.code == .notFound {
            throw BusError(.unavailable, "no terms of service are in effect yet")
        }
    }

    /// Every terms version Legal published, loading them first if the catalog has not yet.
    func versions() async throws -> [LegalVersionSummary] {
        if !state.withLock({ $0.loaded }) { try await reload() }
        return state.withLock { Array($0.versions.values) }
    }

    /// Adds Legal's list of terms versions to the catalog (a version, once published, is never
    /// withdrawn, so merging cannot keep anything Legal no longer has).
    func reload() async throws {
        let versions = try await legal().call(LegalHistory.self, .init(type: .termsOfService), timeout: .seconds(5)).versions
        state.withLock { state in
            for summary in versions { state.versions[summary.version] = summary }
            state.loaded = true
        }
    }

    /// Adds one published version (from an event or Legal's answer); other document types are ignored.
    func remember(_ summary: LegalVersionSummary) {
        guard summary.type == .termsOfService else { return }
        state.withLock { $0.versions[summary.version] = summary }
    }
}
