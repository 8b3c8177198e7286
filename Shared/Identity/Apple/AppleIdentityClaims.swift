import Foundation
import JWTKit

/// What a verified Sign in with Apple identity token says about the user.
///
/// Apple sends `email` only on the first sign-in of a user to an app, or when the app asked for
/// it; `email_verified` and `is_private_email` arrive as JSON booleans or as `"true"`/`"false"`
/// strings, normalised here to `Bool`.
public struct AppleIdentityClaims: Sendable, Equatable {
    /// `sub`: Apple's stable user id for this team (our `apple_id`).
    public let subject: String
    public let email: String?
    public let emailVerified: Bool?
    /// Whether `email` is an Apple private-relay address.
    public let isPrivateEmail: Bool?
    /// The token's `nonce` as Apple wrote it (the app's nonce or its SHA-256 hex).
    public let nonce: String?
    public let authTime: Date?
    public let issuedAt: Date
    public let expiresAt: Date
}

/// The payload as Apple encodes it (jwt-kit's claim types); decoded by jwt-kit only after the
/// signature verified. `email_verified` and `is_private_email` are jwt-kit's `BoolClaim`, which
/// takes a JSON boolean or the strings `"true"`/`"false"`.
struct AppleWireClaims: JWTPayload {
    let iss: String
    let aud: AudienceClaim
    let sub: String
    let exp: ExpirationClaim
    let iat: IssuedAtClaim
    let nbf: NotBeforeClaim?
    let nonce: String?
    let email: String?
    let emailVerified: BoolClaim?
    let isPrivateEmail: BoolClaim?
    let authTime: Date?

    enum CodingKeys: String, CodingKey {
        case iss, aud, sub, exp, iat, nbf, nonce, email
        case emailVerified = "email_verified"
        case isPrivateEmail = "is_private_email"
        case authTime = "auth_time"
    }

    /// Empty: ``AppleIdentityVerifier`` checks the claims with its own clock and leeway.
    func verify(using algorithm: some JWTAlgorithm) throws {}

    var claims: AppleIdentityClaims {
        AppleIdentityClaims(
            subject: sub, email: email, emailVerified: emailVerified?.value, isPrivateEmail: isPrivateEmail?.value,
            nonce: nonce, authTime: authTime, issuedAt: iat.value, expiresAt: exp.value)
    }
}
