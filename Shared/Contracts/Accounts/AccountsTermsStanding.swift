import BusCore
import Foundation

/// `accounts.terms_standing`: which terms version the user's last word accepted, for a gateway
/// that enforces acceptance itself (``LegalVersionSummary/needsAcceptance(afterAccepting:versions:at:)``
/// decides against the versions in effect). For the gateway (service principal) and operators.
///
/// `sequence` is Accounts' outbox sequence read before the user: every event numbered at or
/// below it is reflected in the answer, so a gateway that has applied events only up to it may
/// keep the answer until a later `session.revoked` of the user (a decline ends every session)
/// tells it otherwise. Unknown user: `not_found`.
public enum AccountsTermsStanding: RPCMethod {
    public struct Request: Codable, Sendable, Equatable {
        public var userId: UUID
        public init(userId: UUID) { self.userId = userId }
    }

    public struct Reply: Codable, Sendable, Equatable {
        public var userId: UUID
        /// The version the user accepted when their last word on the terms is a recorded
        /// acceptance; nil when they never accepted, last declined, or the acceptance is not
        /// recorded yet.
        public var acceptedVersion: String?
        /// The outbox sequence the answer is complete up to.
        public var sequence: Int64

        public init(userId: UUID, acceptedVersion: String?, sequence: Int64) {
            self.userId = userId
            self.acceptedVersion = acceptedVersion
            self.sequence = sequence
        }
    }

    public static let type = "accounts.terms_standing"
    public static let isIdempotent = true
    /// A read.
    public static let cachesReply = false
}

/// The event Accounts publishes (through its outbox) when a user declines the terms: whatever
/// acceptance a gateway holds for them no longer stands. (Declining also ends every session of
/// the user, each with its `session.revoked`; this one tells the gateways even when none was open.)
public enum TermsEvents {
    /// The payload is ``TermsDeclined``.
    public static let declined = "accounts.terms_declined"
}

/// The payload of `accounts.terms_declined`.
public struct TermsDeclined: Codable, Sendable, Equatable {
    public var userId: UUID
    public var declinedAt: Date

    public init(userId: UUID, declinedAt: Date) {
        self.userId = userId
        self.declinedAt = declinedAt
    }
}
