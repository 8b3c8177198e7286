import Crypto
import Foundation

/// The `client_secret` Apple's token endpoints take: a short-lived JWT signed with the team's
/// Sign in with Apple key (ES256, P-256), as Apple documents it: header `alg` ES256 and `kid` (the
/// key id), claims `iss` (team id), `iat`, `exp` (at most six months later), `aud`
/// (`https://appleid.apple.com`) and `sub` (the client id: the app's bundle id).
///
/// A fresh secret is made for each call (signing is cheap) and lives five minutes, so a leaked
/// secret is short-lived. The key prints its id only.
public struct AppleClientSecret: Sendable, CustomStringConvertible {
    public static let audience = "https://appleid.apple.com"

    public let teamID: String
    public let keyID: String
    public let clientID: String
    public let lifetime: TimeInterval
    private let key: P256.Signing.PrivateKey

    /// - Parameter privateKeyPEM: the `.p8` file Apple hands out (PKCS#8 PEM).
    public init(teamID: String, keyID: String, clientID: String, privateKeyPEM: String, lifetime: TimeInterval = 300) throws {
        guard !teamID.isEmpty, !keyID.isEmpty, !clientID.isEmpty else {
            throw IdentityError.invalidKey("team id, key id and client id are required")
        }
        do {
            key = try P256.Signing.PrivateKey(pemRepresentation: privateKeyPEM)
        } catch {
            throw IdentityError.invalidKey("the Apple private key must be a P-256 key in PEM (the .p8 file)")
        }
        self.teamID = teamID
        self.keyID = keyID
        self.clientID = clientID
        self.lifetime = lifetime
    }

    private struct Header: Encodable {
        let alg = "ES256"
        let kid: String
    }

    private struct Claims: Encodable {
        let iss: String
        let iat: NumericDate
        let exp: NumericDate
        let aud: String
        let sub: String
    }

    /// A signed secret valid from `now` for ``lifetime``.
    public func make(now: Date = Date()) throws -> String {
        let issued = NumericDate(now)
        let claims = Claims(
            iss: teamID, iat: issued, exp: NumericDate(issued.date.addingTimeInterval(lifetime)), aud: Self.audience, sub: clientID)
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        let (header, payload) = (try encoder.encode(Header(kid: keyID)), try encoder.encode(claims))
        // JWS ES256 signatures are r ‖ s (64 bytes): swift-crypto's raw representation.
        return try CompactJWS.serialize(header: header, payload: payload) { try key.signature(for: $0).rawRepresentation }
    }

    public var description: String { "AppleClientSecret(team: \(teamID), key: \(keyID), client: \(clientID))" }
}
