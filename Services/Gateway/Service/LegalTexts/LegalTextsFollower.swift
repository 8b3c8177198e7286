import Bus
import Contracts
import Foundation
import Logging
import Metrics
import ServiceKit

/// Keeps ``LegalTexts`` current: the fast path is Legal's `legal.published` events, each loading
/// the new version (`legal.version`) the moment it is published; the safety net is a
/// revalidation (`legal.history`, then `legal.version` for any version not held yet), run
///
/// - at start and whenever the connection to Legal (RPC or events) comes back,
/// - when an event's outbox sequence number shows that pub/sub lost one before it,
/// - every `interval` (`GATEWAY_LEGAL_REFRESH`), which also catches a lost last event that no
///   later event would reveal.
///
/// So a newly published version is served by every gateway within `interval` plus one round
/// trip to Legal at worst, and within milliseconds when its event arrives. A version published
/// for a later date is held and takes over at its `effectiveAt` by itself (``LegalTextsState``).
///
/// When Legal cannot be reached (no connection, or a revalidation failed), the texts held are
/// marked unconfirmed and served stale until a revalidation succeeds again. Everything runs on
/// one task, one step at a time, so the state never sees two updates interleave.
package struct LegalTextsFollower: Follower {
    let texts: LegalTexts
    let legal: RPCClient
    package let events: EventSubscriber
    let interval: Duration
    /// Deadline of each call to Legal.
    let timeout: Duration
    let logger: Logger

    /// How often the connection is looked at (and a due revalidation started).
    package var tickInterval: Duration { .milliseconds(200) }
    /// Wait before retrying a failed revalidation (at most `interval`).
    static let retryDelay: Duration = .seconds(1)
    static let principal = Principal.service("gateway")

    /// When the next revalidation is due and why; whether Legal was reachable at the last tick.
    package struct Schedule {
        var due = ContinuousClock.now
        var reason = "start"
        var connected = false

        mutating func now(_ reason: String) {
            due = .now
            self.reason = reason
        }
    }

    package func start() -> Schedule { Schedule() }

    package func follow(_ input: FollowerInput, _ schedule: inout Schedule) async {
        switch input {
        case .event(let envelope): await apply(envelope, &schedule)
        case .tick: await tick(&schedule)
        }
    }

    // MARK: Steps

    private func tick(_ schedule: inout Schedule) async {
        let rpcUp = legal.isConnected
        let up = rpcUp && events.isConnected
        if up && !schedule.connected { schedule.now("connect") }
        schedule.connected = up
        if !rpcUp { unconfirmed("no connection to Legal") }
        Gauge(label: "gateway_legal_cache_stale").record(rpcUp && texts.update({ $0.confirmed }) ? 0 : 1)
        guard rpcUp, ContinuousClock.now >= schedule.due else { return }
        await revalidate(&schedule)
    }

    private func apply(_ event: Envelope, _ schedule: inout Schedule) async {
        switch texts.update({ $0.observe(sequence: event.sequence) }) {
        case .seen:
            Self.count(event: "already_seen")
        case .gap:
            Self.count(event: "gap")
            logger.info(
                "legal event sequence gap: revalidating the legal texts", metadata: ["sequence": "\(event.sequence.map(String.init) ?? "none")"])
            schedule.now("gap")
            if legal.isConnected { await revalidate(&schedule) }
        case .next:
            guard event.type == LegalEvents.published else { return }
            do {
                let summary = try event.decodePayload(LegalVersionSummary.self)
                let text = try await text(of: summary)
                texts.update { $0.add(text, at: Date()) }
                Self.count(event: "applied")
                logger.info(
                    "legal text loaded from its event",
                    metadata: [
                        "type": "\(summary.type.rawValue)", "version": "\(summary.version)",
                        "effective_at": "\(Timestamp.format(summary.effectiveAt))",
                    ])
            } catch {
                Self.count(event: "failed")
                logger.warning("legal.published event not applied; revalidating", metadata: ["error": "\(error)"])
                schedule.now("retry")
            }
        }
    }

    /// Loads what Legal holds now: the last event sequence first, then each type's history, so
    /// every event up to that sequence is reflected in what is loaded.
    private func revalidate(_ schedule: inout Schedule) async {
        let reason = schedule.reason
        do {
            let latest = try await latestSequence()
            var loaded: [LegalDocumentType: [LegalText]] = [:]
            var histories: [LegalDocumentType: [LegalVersionSummary]] = [:]
            for type in LegalDocumentType.allCases {
                let history = try await legal.call(LegalHistory.self, .init(type: type), principal: Self.principal, timeout: timeout).versions
                var versions: [LegalText] = []
                for summary in LegalTextsState.wanted(history, at: Date()) { versions.append(try await text(of: summary)) }
                loaded[type] = versions
                histories[type] = history
            }
            let (before, after, wasConfirmed) = texts.update { state in
                let before = state.versionsInEffect
                let wasConfirmed = state.confirmed
                state.replace(with: loaded, histories: histories, latestSequence: latest, at: Date())
                return (before, state.versionsInEffect, wasConfirmed)
            }
            Counter(label: "gateway_legal_cache_refreshes_total", dimensions: [("reason", reason), ("result", "ok")]).increment()
            if before != after || !wasConfirmed {
                logger.info(
                    "legal texts revalidated",
                    metadata: [
                        "reason": "\(reason)",
                        "in_effect":
                            "\(after.sorted { $0.key.rawValue < $1.key.rawValue }.map { "\($0.key.rawValue)=\($0.value)" }.joined(separator: ","))",
                        "sequence": "\(latest)",
                    ])
            }
            schedule.due = .now + interval
            schedule.reason = "interval"
        } catch {
            Counter(label: "gateway_legal_cache_refreshes_total", dimensions: [("reason", reason), ("result", "failed")]).increment()
            unconfirmed("revalidation failed: \(error)")
            schedule.due = .now + min(interval, Self.retryDelay)
            schedule.reason = "retry"
        }
    }

    /// Marks the texts unconfirmed (served stale), logging when they were confirmed until now.
    private func unconfirmed(_ why: String) {
        let wasConfirmed = texts.update { state in
            defer { state.confirmed = false }
            return state.confirmed
        }
        if wasConfirmed {
            logger.warning("legal texts can no longer be confirmed with Legal: serving the last ones, marked stale", metadata: ["why": "\(why)"])
        }
    }

    // MARK: Calls to Legal

    /// The held text of `summary`'s version, or that version loaded from Legal.
    private func text(of summary: LegalVersionSummary) async throws -> LegalText {
        if let held = texts.update({ $0.text(for: summary) }) { return held }
        let document = try await legal.call(
            LegalVersion.self, .init(type: summary.type, version: summary.version), principal: Self.principal, timeout: timeout)
        return try LegalText(document)
    }

    /// The sequence number of the last event Legal published (`legal.events.since` past the end).
    private func latestSequence() async throws -> Int64 {
        try await legal.events(of: ServiceName.legal.rawValue, after: .max, limit: 1, principal: Self.principal, timeout: timeout).latestSequence
    }

    private static func count(event outcome: String) {
        Counter(label: "gateway_legal_cache_events_total", dimensions: [("outcome", outcome)]).increment()
    }
}
