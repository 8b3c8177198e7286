/// One request/reply message type of a service's bus API. Each lives in `Shared/Contracts`:
///
/// ```swift
/// public enum AuditRecord: RPCMethod {
///     public typealias Request = RecordAcceptance
///     public typealias Reply = ConsentReceipt
///     public static let type = "audit.record"
///     public static let isIdempotent = true
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
    /// Whether the server should keep the reply to answer a retry from it (the client then gives
    /// every call a key). True for idempotent methods unless they say otherwise: a method whose
    /// items carry their own keys (a batch) is safe to run again and need not hold its replies,
    /// which would be large.
    static var cachesReply: Bool { get }
}

extension RPCMethod {
    public static var isIdempotent: Bool { false }
    public static var cachesReply: Bool { isIdempotent }
}

/// The payload of a request or reply that carries nothing.
public struct Empty: Codable, Sendable, Equatable {
    public init() {}
}
