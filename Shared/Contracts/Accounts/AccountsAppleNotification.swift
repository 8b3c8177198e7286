import BusCore
import Foundation

/// `accounts.apple_notification`: a Sign in with Apple server-to-server notification, as the
/// gateway received it (the `payload` member of Apple's POST body: a signed JWT). Verified against
/// Apple's keys, then applied once: `email-disabled` / `email-enabled` store the flag,
/// `consent-revoked` ends the Apple id's sessions and drops the stored Apple token,
/// `account-delete` deletes the account at once (as a confirmed deletion, with a certificate).
/// A repeat of a notification changes nothing (`duplicate`); an unknown Apple id or event type is
/// accepted and ignored so Apple stops retrying. Errors: `unauthenticated` (signature, issuer,
/// audience), `invalid_argument` (malformed), `unavailable` (Apple's keys could not be loaded).
/// For the gateway (not `user` principals).
public enum AccountsAppleNotification: RPCMethod {
    public struct Request: Codable, Sendable, Equatable {
        public var payload: String
        public init(payload: String) { self.payload = payload }
    }
    public struct Reply: Codable, Sendable, Equatable {
        /// `applied`, `duplicate` or `ignored`.
        public var outcome: String
        public var eventType: String
        /// For an applied `account-delete`: the certificate id.
        public var certificateId: UUID?
        public init(outcome: String, eventType: String, certificateId: UUID? = nil) {
            self.outcome = outcome
            self.eventType = eventType
            self.certificateId = certificateId
        }
    }
    public static let type = "accounts.apple_notification"
    public static let isIdempotent = true
    public static let cachesReply = true
}
