import Foundation

/// The one rule for idempotency keys, shared by the bus and the HTTP edge: a key a client chooses
/// is 1 to ``clientKeyMaximumBytes`` bytes of UTF-8; the key that travels on the bus may carry a
/// scope in front of it (the gateway prefixes the account acted on), so it may be up to
/// ``busKeyMaximumBytes``. A longer key is refused, never cut.
public enum IdempotencyKeyRule {
    /// The longest key a client (an HTTP `Idempotency-Key`, a batch item's key) may choose.
    public static let clientKeyMaximumBytes = 200
    /// Room for a scope the edge adds in front of a client's key (`http:<uuid>:` is 42 bytes).
    public static let scopeAllowanceBytes = 64
    /// The longest key an envelope may carry.
    public static let busKeyMaximumBytes = clientKeyMaximumBytes + scopeAllowanceBytes

    /// Whether `key` is acceptable as a client's own key.
    public static func isValidClientKey(_ key: String) -> Bool {
        (1...clientKeyMaximumBytes).contains(key.utf8.count)
    }

    /// Whether `key` is acceptable in an envelope.
    public static func isValidBusKey(_ key: String) -> Bool {
        (1...busKeyMaximumBytes).contains(key.utf8.count)
    }

    /// A digest of what a request asks for (its payload and attachments), to tell a retry from
    /// another request that reuses its key. Keyed by the process's random hashing seed, so
    /// callers cannot craft collisions; it never leaves the process.
    package static func digest(payload: Data?, attachments: [Data]) -> Int {
        var hasher = Hasher()
        hasher.combine(payload?.count ?? -1)
        if let payload { payload.withUnsafeBytes { hasher.combine(bytes: $0) } }
        for attachment in attachments {
            hasher.combine(attachment.count)
            attachment.withUnsafeBytes { hasher.combine(bytes: $0) }
        }
        return hasher.finalize()
    }
}

/// A request whose idempotency digest covers what it asks for, not how it was observed: a retry
/// (or another path recording the same act under the same key) may come from another address or
/// client, and is still the same request. Requests that do not conform are digested whole.
public protocol IdempotencyFingerprinted {
    /// Feeds the members that make the request what it is (not client address or agent).
    func hashFingerprint(into hasher: inout Hasher)
}
