import Foundation

/// A user as the Accounts service answers with it: the stored fields of seed 004's `User`, plus
/// what the app decides its next screen by (`hasConfirmedEligibility`, `hasAcceptedTOS`,
/// `needsToAcceptTOS`). The gateway maps the names to the seed's snake_case.
public struct AccountUser: Codable, Sendable, Equatable {
    /// `nil` only for a sign-in that has not confirmed eligibility yet: no account exists until
    /// it does (see `accounts.get_or_create`).
    public var id: UUID?
    public var appleId: String
    public var email: String?
    public var name: String?
    public var username: String?
    /// Two-letter state of residence (US state or DC), upper case.
    public var state: String?
    public var eligibilityConfirmedAt: Date?
    /// The terms version last accepted through Accounts.
    public var tosVersion: String?
    public var tosAcceptedAt: Date?
    public var createdAt: Date?
    /// Which version of the eligibility rules the user was admitted under.
    public var eligibilityRulesVersion: String?
    /// Eligibility (state, age, skill-contest confirmation) was confirmed.
    public var hasConfirmedEligibility: Bool
    /// The user's last word on the terms is an acceptance of the version in effect now.
    public var hasAcceptedTOS: Bool
    /// The user must accept the terms (again) before going on: never accepted, last declined,
    /// or a material version took effect since (Audit's `needsAcceptance`).
    public var needsToAcceptTOS: Bool

    public init(
        id: UUID?, appleId: String, email: String?, name: String?, username: String?, state: String?,
        eligibilityConfirmedAt: Date?, tosVersion: String?, tosAcceptedAt: Date?, createdAt: Date?,
        eligibilityRulesVersion: String?, hasConfirmedEligibility: Bool, hasAcceptedTOS: Bool, needsToAcceptTOS: Bool
    ) {
        self.id = id
        self.appleId = appleId
        self.email = email
        self.name = name
        self.username = username
        self.state = state
        self.eligibilityConfirmedAt = eligibilityConfirmedAt
        self.tosVersion = tosVersion
        self.tosAcceptedAt = tosAcceptedAt
        self.createdAt = createdAt
        self.eligibilityRulesVersion = eligibilityRulesVersion
        self.hasConfirmedEligibility = hasConfirmedEligibility
        self.hasAcceptedTOS = hasAcceptedTOS
        self.needsToAcceptTOS = needsToAcceptTOS
    }
}

/// The message of a `restricted_state` refusal, exactly as seed 004's client shows it.
public let accountsRestrictedStateMessage = "Fantasy contests are not available in your state"
