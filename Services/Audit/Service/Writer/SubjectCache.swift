import Crypto
import Foundation
import Locks

/// A subject as a record carries it: the pseudonym in the row, the secret that keys the HMACs of
/// the person's IP and user agent.
struct Subject: Sendable {
    let pseudonym: UUID
    let secret: [UInt8]
    /// HMAC-SHA256 keyed by `secret`, keyed once: each record's IP address and user agent copy it
    /// (``personalHMAC(_:keyed:)``). Keying it afresh for each of them, two block hashes and
    /// swift-crypto's generic set-up, was about a tenth of Audit's CPU (2026-11-28 profile).
    let keyed: HMAC<SHA256>

    init(pseudonym: UUID, secret: [UInt8]) {
        self.pseudonym = pseudonym
        self.secret = secret
        keyed = HMAC(key: SymmetricKey(data: secret))
    }
}

/// The subjects an instance's writers met in the last `lifetime`, so a batch of users already
/// seen is written in one statement instead of reading its subjects first (``BatchWriter``).
///
/// Nothing is written from a stale entry: the one statement refuses a batch whose pseudonyms are
/// not all still in `audit.subjects` (SQLSTATE CA001), and the writer then reads them again. What
/// the lifetime bounds is how long an erased subject's secret can stay in the memory of an
/// instance that did not erase it; the instance that erases drops it at once (``forget(_:)``), and
/// a writer that read the subject before the erasure does not put it back afterwards
/// (``store(_:ifNoErasureSince:now:)``).
final class SubjectCache: Sendable {
    private struct Entry {
        let subject: Subject
        let stored: ContinuousClock.Instant
    }

    private struct State {
        var entries: [UUID: Entry] = [:]
        /// How many times ``forget(_:)`` ran: erasures are rare, so one count for every user is enough.
        var erasures = 0
    }

    private let state = LockedValue(State())
    private let lifetime: Duration
    private let capacity: Int

    /// `lifetime` zero keeps nothing (every batch reads its subjects).
    init(lifetime: Duration, capacity: Int = 100_000) {
        self.lifetime = lifetime
        self.capacity = capacity
    }

    /// Every user's subject, or nil when any of them is unknown or older than the lifetime.
    func subjects(of users: [UUID], now: ContinuousClock.Instant = .now) -> [UUID: Subject]? {
        guard lifetime > .zero else { return nil }
        return state.withLock { state in
            var found: [UUID: Subject] = [:]
            found.reserveCapacity(users.count)
            for user in users {
                guard let entry = state.entries[user], now - entry.stored < lifetime else { return nil }
                found[user] = entry.subject
            }
            return found
        }
    }

    /// How many erasures this instance has seen (``forget(_:)``), for ``store(_:ifNoErasureSince:now:)``.
    var erasuresNoted: Int { state.withLock { $0.erasures } }

    /// Keeps `subjects` (as just read from the database). Full, it first drops what has expired,
    /// and everything if that is not enough: a cold cache costs one extra round trip per batch.
    ///
    /// `ifNoErasureSince`: ``erasuresNoted`` as it was before the subjects were read. If an erasure
    /// has been seen since, nothing is kept: an erasure waits for a writer that has read its user's
    /// subject and forgets it only after that writer committed, so a writer storing late would put an
    /// erased subject (and its secret) back. Nil keeps them regardless.
    func store(_ subjects: [UUID: Subject], ifNoErasureSince erasures: Int? = nil, now: ContinuousClock.Instant = .now) {
        guard lifetime > .zero, !subjects.isEmpty else { return }
        state.withLock { state in
            if let erasures, state.erasures != erasures { return }
            if state.entries.count + subjects.count > capacity {
                state.entries = state.entries.filter { now - $0.value.stored < lifetime }
                if state.entries.count + subjects.count > capacity { state.entries.removeAll(keepingCapacity: true) }
            }
            for (user, subject) in subjects { state.entries[user] = Entry(subject: subject, stored: now) }
        }
    }

    /// Drops a user's subject: it has just been erased.
    func forget(_ user: UUID) {
        state.withLock { state in
            state.erasures += 1
            state.entries[user] = nil
        }
    }
}
