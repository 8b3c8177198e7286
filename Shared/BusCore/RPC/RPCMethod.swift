/// One request/reply message type of a service's bus API. Each lives in `Shared/Contracts`:
///
/// ```swift
/// public enum AuditRecord: RPCMethod {
///     public typealias Request = RecordAcceptance
///     public typealias Reply = ConsentReceipt
///     public static let type = "audit.record"
///     public static let isIdempotent = true
///     public static let cachesReply = true
/// }
/// ```
public protocol RPCMethod: Sendable {
    associatedtype Request: Codable & Sendable
    associatedtype Reply: Codable & Sendable
    /// The envelope `type`, `<service>.<operation>`.
    static var type: String { get }
    /// Safe to send again with the same idempotency key: the client retries it on a lost reply,
    /// and the server answers a repeat from its record instead of running it twice.
    static var isIdempotent: Bool { get }
    /// Whether the server keeps the reply to answer a retry with the same key from it (the client
    /// then gives every call a key). Every method says so itself, with no default, so a new method
    /// cannot forget it either way: a write that is retried says `true` (its effect happens once);
    /// a read says `false` (answering it again costs one read, while keeping every read's reply let
    /// any caller grow the server's memory with fresh keys); a batch whose items carry their own
    /// keys says `false` (running it again is harmless and its replies would be large).
    static var cachesReply: Bool { get }
}

extension RPCMethod {
    public static var isIdempotent: Bool { false }
}

/// The payload of a request or reply that carries nothing.
public struct Empty: Codable, Sendable, Equatable {
    public init() {}
}
