import Foundation
import JWTKit
import Logging

/// Apple's signing keys, loaded once and kept, reloaded when a token names a key we do not have.
///
/// Apple rotates keys without notice, so an unknown `kid` triggers a reload, but at most once per
/// ``minimumRefreshInterval``: a stream of tokens with made-up key ids must not turn into a stream
/// of fetches. Keys are also reloaded after ``maximumAge`` so a withdrawn key stops verifying.
/// Concurrent callers share one load. A failed reload keeps the keys already held.
///
/// The keys are held as a jwt-kit `JWTKeyCollection` (one per loaded set), which the verifiers
/// hand the token to once this cache has said the token's `kid` is in it.
public actor AppleKeyCache {
    public let source: AppleKeySource
    public let minimumRefreshInterval: Duration
    public let maximumAge: Duration
    private let fetchTimeout: TimeInterval
    private let logger: Logger
    private let clock = ContinuousClock()

    private var kids: Set<String> = []
    private var collection: JWTKeyCollection?
    private var loadedAt: ContinuousClock.Instant?
    private var lastAttempt: ContinuousClock.Instant?
    private var inFlight: Task<Void, any Error>?

    /// - Parameters:
    ///   - minimumRefreshInterval: least time between two loads caused by unknown key ids.
    ///   - maximumAge: keys older than this are reloaded before use.
    public init(
        source: AppleKeySource, minimumRefreshInterval: Duration = .seconds(60), maximumAge: Duration = .seconds(24 * 3600),
        fetchTimeout: TimeInterval = 10, logger: Logger
    ) {
        self.source = source
        self.minimumRefreshInterval = minimumRefreshInterval
        self.maximumAge = maximumAge
        self.fetchTimeout = fetchTimeout
        self.logger = logger
    }

    /// A key collection that holds the key with id `kid`, loading or reloading the set when
    /// needed and allowed; ``IdentityError/unknownKey`` when the set has no such key.
    public func keys(containing kid: String) async throws -> JWTKeyCollection {
        let now = clock.now
        let stale = loadedAt.map { now - $0 >= maximumAge } ?? true
        if !stale, kids.contains(kid), let collection { return collection }
        // Stale, or an unknown kid: reload, unless the last attempt was too recent (then a stale
        // set is still used rather than failing every request while the source is down). A load
        // already running is always joined: callers that arrive during the first load need it.
        let mayRefresh = lastAttempt.map { now - $0 >= minimumRefreshInterval } ?? true
        if mayRefresh || inFlight != nil {
            do {
                try await reload()
            } catch {
                if collection == nil { throw error }
                logger.info("apple key set reload failed; keeping the keys held", metadata: ["error": "\(error)"])
            }
        }
        guard let collection else { throw IdentityError.keySetUnavailable("no key set loaded yet") }
        guard kids.contains(kid) else { throw IdentityError.unknownKey }
        return collection
    }

    /// Loads the key set now (sharing a load already running).
    public func reload() async throws {
        if let inFlight {
            try await inFlight.value
            return
        }
        lastAttempt = clock.now
        // The task installs the keys itself before it completes, so every caller awaiting it (the
        // one that started it and any that joined) finds them in place when it resumes.
        let task = Task { try await self.loadAndInstall() }
        inFlight = task
        try await task.value
    }

    private func loadAndInstall() async throws {
        defer { inFlight = nil }
        let set = try await source.load(timeout: fetchTimeout)
        collection = try await set.collection()
        kids = Set(set.keys.keys)
        loadedAt = clock.now
        logger.debug("apple key set loaded", metadata: ["keys": "\(set.keys.count)"])
    }
}
