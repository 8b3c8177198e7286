import Crypto
import Foundation
import Locks

/// The SHA-256 state of uploads in progress, kept in memory between their chunks.
///
/// swift-crypto cannot export a hash's state, so it is not stored: an entry says which offset it
/// covers, and when it is missing or covers another offset (the service restarted, another
/// instance took the previous chunk, or the entry was evicted) the state is recomputed from the
/// stored bytes (``DocumentsStore`` reads them back chunk by chunk). A hit costs nothing; a miss
/// costs one read of what was uploaded so far, once per resumption.
final class RunningHashes: Sendable {
    private struct Entry {
        var offset: Int64
        var hash: Crypto.SHA256
    }
    private let entries = LockedValue<[UUID: Entry]>([:])
    /// Uploads remembered at most (an entry is about 200 bytes); beyond it one is dropped and will be
    /// recomputed if its upload continues.
    private let capacity: Int

    init(capacity: Int = 10_000) { self.capacity = capacity }

    /// The state after the first `offset` bytes of upload `id`, if remembered.
    func state(of id: UUID, at offset: Int64) -> Crypto.SHA256? {
        entries.withLock { entries in
            guard let entry = entries[id], entry.offset == offset else { return nil }
            return entry.hash
        }
    }

    /// Remembers the state after `offset` committed bytes.
    func remember(_ hash: Crypto.SHA256, of id: UUID, at offset: Int64) {
        entries.withLock { entries in
            if entries[id] == nil, entries.count >= capacity, let victim = entries.keys.first { entries[victim] = nil }
            entries[id] = Entry(offset: offset, hash: hash)
        }
    }

    func forget(_ id: UUID) {
        _ = entries.withLock { $0.removeValue(forKey: id) }
    }
}
