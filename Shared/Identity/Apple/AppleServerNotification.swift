import Foundation
import JWTKit

/// One Sign in with Apple server-to-server notification, verified: the `events` claim (itself a
/// JSON string in the JWT) decoded.
public struct AppleServerNotification: Sendable, Equatable {
    /// `email-disabled`, `email-enabled`, `consent-revoked`, `account-delete` (others may come).
    public let type: String
    /// The Apple user id (`sub` of identity tokens).
    public let subject: String
    public let email: String?
    public let isPrivateEmail: Bool?
    /// When the event happened at Apple (`event_time`).
    public let eventTime: Date
    /// The JWT's `jti`, when Apple sends one.
    public let tokenID: String?
}

/// Verifies the signed payload Apple posts to the server-to-server notification endpoint (through
/// jwt-kit, after the same checks as ``AppleIdentityVerifier``): an RS256 JWT signed with the same
/// keys as identity tokens, issuer `https://appleid.apple.com`, audience the app's client id, `iat` not in the future. It carries no `exp`, so freshness is not judged
/// here: replays are made harmless by the caller recording each notification once.
public struct AppleNotificationVerifier: Sendable {
    public let audiences: Set<String>
    public let leeway: TimeInterval
    private let keys: AppleKeyCache

    public init(audiences: Set<String>, keys: AppleKeyCache, leeway: TimeInterval = 60) {
        self.audiences = audiences
        self.keys = keys
        self.leeway = leeway
    }

    /// The JWT's claims (jwt-kit payload); `events` is itself JSON in a string.
    private struct Wire: JWTPayload {
        let iss: String
        let aud: AudienceClaim
        let iat: IssuedAtClaim
        let jti: String?
        let events: String

        /// Empty: checked below with the caller's clock and the leeway.
        func verify(using algorithm: some JWTAlgorithm) throws {}
    }

    private struct Events: Decodable {
        let type: String
        let sub: String
        let email: String?
        let isPrivateEmail: BoolClaim?
        let eventTime: Double

        enum CodingKeys: String, CodingKey {
            case type, sub, email
            case isPrivateEmail = "is_private_email"
            case eventTime = "event_time"
        }
    }

    /// The notification in `payload`, or ``IdentityError``.
    public func verify(_ payload: String, now: Date = Date()) async throws -> AppleServerNotification {
        let jws = try CompactJWS(parsing: payload)
        guard jws.algorithm == "RS256" else { throw IdentityError.unsupported(jws.algorithm) }
        guard let kid = jws.header.kid, !kid.isEmpty else { throw IdentityError.malformed("missing kid") }
        let collection = try await keys.keys(containing: kid)
        let wire: Wire
        do {
            wire = try await collection.verify(payload, as: Wire.self)
        } catch {
            throw IdentityError.fromJWTKit(error)
        }
        guard wire.iss == AppleIdentityVerifier.issuer else { throw IdentityError.wrongIssuer }
        guard wire.aud.value.contains(where: audiences.contains) else { throw IdentityError.wrongAudience }
        guard wire.iat.value <= now.addingTimeInterval(leeway) else { throw IdentityError.notYetValid }
        guard let events = try? JSONDecoder().decode(Events.self, from: Data(wire.events.utf8)), !events.sub.isEmpty,
            !events.type.isEmpty, events.eventTime.isFinite
        else { throw IdentityError.malformed("invalid events claim") }
        // Apple documents seconds; a value past year 5000 in seconds is taken as milliseconds.
        let seconds = events.eventTime > 100_000_000_000 ? events.eventTime / 1000 : events.eventTime
        return AppleServerNotification(
            type: events.type, subject: events.sub, email: events.email, isPrivateEmail: events.isPrivateEmail?.value,
            eventTime: Date(timeIntervalSince1970: seconds), tokenID: wire.jti)
    }
}
