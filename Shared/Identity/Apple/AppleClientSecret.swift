import Foundation
import JWTKit

/// The `client_secret` Apple's token endpoints take: a short-lived JWT signed with the team's
/// Sign in with Apple key (ES256, P-256) through jwt-kit, as Apple documents it: header `alg`
/// ES256 and `kid` (the key id; jwt-kit adds `typ` JWT), claims `iss` (team id), `iat`, `exp` (at
/// most six months later), `aud` (`https://appleid.apple.com`) and `sub` (the client id: the
/// app's bundle id).
///
/// A fresh secret is made for each call (signing is cheap) and lives five minutes, so a leaked
/// secret is short-lived. The key prints its id only.
public struct AppleClientSecret: Sendable, CustomStringConvertible {
    public static let audience = "https://appleid.apple.com"

    public let teamID: String
    public let keyID: String
    public let clientID: String
    public let lifetime: TimeInterval
    private let signing: KeyCollection

    /// - Parameter privateKeyPEM: the `.p8` file Apple hands out (PKCS#8 PEM).
    public init(teamID: String, keyID: String, clientID: String, privateKeyPEM: String, lifetime: TimeInterval = 300) throws {
        guard !teamID.isEmpty, !keyID.isEmpty, !clientID.isEmpty else {
            throw IdentityError.invalidKey("team id, key id and client id are required")
        }
        let key: ES256PrivateKey
        do {
            key = try ES256PrivateKey(pem: privateKeyPEM)
        } catch {
            throw IdentityError.invalidKey("the Apple private key must be a P-256 key in PEM (the .p8 file)")
        }
        self.teamID = teamID
        self.keyID = keyID
        self.clientID = clientID
        self.lifetime = lifetime
        signing = KeyCollection { collection in
            await collection.add(
                ecdsa: key, kid: JWKIdentifier(string: keyID), parser: TokenCoding.parser, serializer: TokenCoding.serializer)
        }
    }

    private struct Claims: JWTPayload {
        let iss: IssuerClaim
        let iat: IssuedAtClaim
        let exp: ExpirationClaim
        let aud: AudienceClaim
        let sub: SubjectClaim

        /// Nothing to check: we make these, Apple verifies them.
        func verify(using algorithm: some JWTAlgorithm) throws {}
    }

    /// A signed secret valid from `now` for ``lifetime``.
    public func make(now: Date = Date()) async throws -> String {
        let issued = TokenCoding.wholeSeconds(now)
        let claims = Claims(
            iss: IssuerClaim(value: teamID), iat: IssuedAtClaim(value: issued), exp: ExpirationClaim(value: issued.addingTimeInterval(lifetime)),
            aud: AudienceClaim(value: [Self.audience]), sub: SubjectClaim(value: clientID))
        // jwt-kit writes ES256 signatures as JWS wants them: r ‖ s (64 bytes).
        return try await signing.collection.sign(claims, kid: JWKIdentifier(string: keyID))
    }

    public var description: String { "AppleClientSecret(team: \(teamID), key: \(keyID), client: \(clientID))" }
}
