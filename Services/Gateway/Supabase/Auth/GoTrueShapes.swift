import Bus
import Contracts
import Foundation
import GatewayService

/// The user and session bodies of Supabase Auth (GoTrue), as supabase-swift, supabase-js and
/// supabase-py decode them (`User`, `Session`): snake_case, RFC 3339 dates.
///
/// The user is the Accounts user: `id` is the account's id, or, before eligibility is confirmed,
/// the id the account will get (Accounts gives it out at the first sign-in), so one id from the
/// first sign-in on whichever door (`/api/auth/apple` or `/auth/v1`) the user came in by. The one
/// provider is Apple; the app's own state (eligibility, terms) is in `app_metadata`, which only
/// the server writes.
struct GoTrueUser: Encodable, Sendable {
    struct Identity: Encodable, Sendable {
        let identity_id: UUID
        /// The provider's subject (Apple's `sub`), as GoTrue's identities carry it.
        let id: String
        let user_id: UUID
        let identity_data: [String: JSONValue]
        let provider = "apple"
        let email: String?
        let created_at: Date
        let last_sign_in_at: Date
        let updated_at: Date
    }

    let id: UUID
    let aud = "authenticated"
    let role = "authenticated"
    let email: String
    let phone = ""
    let email_confirmed_at: Date?
    let confirmed_at: Date?
    let last_sign_in_at: Date
    let app_metadata: [String: JSONValue]
    let user_metadata: [String: JSONValue]
    let identities: [Identity]
    let created_at: Date
    let updated_at: Date
    let is_anonymous = false

    /// `user` from Accounts (nil when only the session is known: a refresh before the account
    /// exists), `accountId` the id it has or will get.
    init(accountId: UUID, appleId: String, user: AccountUser?, now: Date = Date()) {
        let created = user?.createdAt ?? now
        let email = user?.email ?? ""
        id = accountId
        self.email = email
        // Apple verifies the addresses it hands out.
        email_confirmed_at = email.isEmpty ? nil : created
        confirmed_at = email_confirmed_at
        last_sign_in_at = now
        app_metadata = [
            "provider": .string("apple"), "providers": .array([.string("apple")]),
            "eligibility_confirmed": .bool(user?.hasConfirmedEligibility ?? false),
            "tos_accepted": .bool(user?.hasAcceptedTOS ?? false),
            "needs_to_accept_tos": .bool(user?.needsToAcceptTOS ?? true),
        ]
        var metadata: [String: JSONValue] = ["sub": .string(appleId), "provider_id": .string(appleId)]
        if let name = user?.name, !name.isEmpty { metadata["full_name"] = .string(name) }
        if !email.isEmpty { metadata["email"] = .string(email) }
        user_metadata = metadata
        identities = [
            Identity(
                identity_id: accountId, id: appleId, user_id: accountId, identity_data: metadata, email: email.isEmpty ? nil : email,
                created_at: created, last_sign_in_at: now, updated_at: created)
        ]
        created_at = created
        updated_at = user?.tosAcceptedAt.map { max($0, created) } ?? created
    }
}

/// GoTrue's session: the access token is the session token the native API uses (an EdDSA JWT
/// with `sub`, `role`, `aud`, `exp`), the refresh token Accounts' rotating one.
struct GoTrueSession: Encodable, Sendable {
    let access_token: String
    let token_type = "bearer"
    let expires_in: Int
    let expires_at: Int
    let refresh_token: String
    let user: GoTrueUser

    init(token: String, expiresAt: Date, refreshToken: String, user: GoTrueUser, now: Date = Date()) {
        access_token = token
        expires_at = Int(expiresAt.timeIntervalSince1970.rounded(.down))
        expires_in = max(0, Int(expiresAt.timeIntervalSince(now).rounded(.down)))
        refresh_token = refreshToken
        self.user = user
    }
}
