import BusCore
import Contracts
import Foundation
import Hex

/// The user as seed 004's routes answer with it.
///
/// Seed 004 does not print its `User` model, only that the client reads `id` (a `UUID`),
/// `username`, `hasConfirmedEligibility` and `hasAcceptedTOS`, with a plain `JSONDecoder`. So the
/// stored fields use the database's snake_case names (as the seed's SQL shows them), and the
/// three flags appear under both spellings (`has_confirmed_eligibility` and
/// `hasConfirmedEligibility`, …): a model with or without snake_case coding keys decodes.
///
/// - A sign-in that has not confirmed eligibility has no account (Accounts stores nothing): its
///   `id` is the nil UUID `00000000-0000-0000-0000-000000000000`, so a model with a non-optional
///   `id` still decodes, and `hasConfirmedEligibility` is false, which sends the app to its
///   eligibility screen.
/// - `hasAcceptedTOS` is `!needsToAcceptTOS` (Audit's rule: never accepted, last declined, or a
///   material version took effect since). After an editorial terms update the app is not sent
///   through its terms screen again, which is the only thing the seed's flag drives.
/// - Dates are RFC 3339 strings.
package struct OnboardingUserJSON: Encodable {
    let user: AccountUser

    static let nilID = UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0))

    enum Keys: String, CodingKey {
        case id, apple_id, email, name, username, state, eligibility_confirmed_at, tos_version, tos_accepted_at, created_at
        case eligibility_rules_version
        case has_confirmed_eligibility, hasConfirmedEligibility, has_accepted_tos, hasAcceptedTOS, needs_to_accept_tos, needsToAcceptTOS
    }

    package func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: Keys.self)
        try container.encode(Hex.uuid(user.id ?? Self.nilID), forKey: .id)
        try container.encode(user.appleId, forKey: .apple_id)
        try container.encode(user.email, forKey: .email)
        try container.encode(user.name, forKey: .name)
        try container.encode(user.username, forKey: .username)
        try container.encode(user.state, forKey: .state)
        try container.encode(user.eligibilityConfirmedAt, forKey: .eligibility_confirmed_at)
        try container.encode(user.tosVersion, forKey: .tos_version)
        try container.encode(user.tosAcceptedAt, forKey: .tos_accepted_at)
        try container.encode(user.createdAt, forKey: .created_at)
        try container.encode(user.eligibilityRulesVersion, forKey: .eligibility_rules_version)
        for key in [Keys.has_confirmed_eligibility, .hasConfirmedEligibility] { try container.encode(user.hasConfirmedEligibility, forKey: key) }
        for key in [Keys.has_accepted_tos, .hasAcceptedTOS] { try container.encode(!user.needsToAcceptTOS, forKey: key) }
        for key in [Keys.needs_to_accept_tos, .needsToAcceptTOS] { try container.encode(user.needsToAcceptTOS, forKey: key) }
    }
}

/// The same JSON written directly (``HandEncodedJSON``): one of these per acceptance was 6.6% of
/// the gateway's CPU through `Encodable`. Keys in their sorted (UTF-8 byte) order, `nil` as `null`,
/// as the conformance above writes them; `OnboardingUserJSONTests` compares the two.
extension OnboardingUserJSON: HandEncodedJSON {
    package func appendJSON(to out: inout JSONOutput) {
        out.beginObject()
        out.nullable("apple_id", user.appleId)
        out.nullable("created_at", user.createdAt)
        out.nullable("eligibility_confirmed_at", user.eligibilityConfirmedAt)
        out.nullable("eligibility_rules_version", user.eligibilityRulesVersion)
        out.nullable("email", user.email)
        out.member("hasAcceptedTOS", !user.needsToAcceptTOS)
        out.member("hasConfirmedEligibility", user.hasConfirmedEligibility)
        out.member("has_accepted_tos", !user.needsToAcceptTOS)
        out.member("has_confirmed_eligibility", user.hasConfirmedEligibility)
        out.key("id")
        out.uuid(user.id ?? Self.nilID, uppercase: false)
        out.nullable("name", user.name)
        out.member("needsToAcceptTOS", user.needsToAcceptTOS)
        out.member("needs_to_accept_tos", user.needsToAcceptTOS)
        out.nullable("state", user.state)
        out.nullable("tos_accepted_at", user.tosAcceptedAt)
        out.nullable("tos_version", user.tosVersion)
        out.nullable("username", user.username)
        out.endObject()
    }
}
