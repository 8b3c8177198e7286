import Foundation

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

/// The payload as Apple encodes it; decoded only after the signature verified.
struct AppleWireClaims: Decodable {
    let iss: String
    let aud: Audience
    let sub: String
    let exp: NumericDate
    let iat: NumericDate
    let nbf: NumericDate?
    let nonce: String?
    let email: String?
    let emailVerified: LenientBool?
    let isPrivateEmail: LenientBool?
    let authTime: NumericDate?

    enum CodingKeys: String, CodingKey {
        case iss, aud, sub, exp, iat, nbf, nonce, email
        case emailVerified = "email_verified"
        case isPrivateEmail = "is_private_email"
        case authTime = "auth_time"
    }

    var claims: AppleIdentityClaims {
        AppleIdentityClaims(
            subject: sub, email: email, emailVerified: emailVerified?.value, isPrivateEmail: isPrivateEmail?.value,
            nonce: nonce, authTime: authTime?.date, issuedAt: iat.date, expiresAt: exp.date)
    }
}
