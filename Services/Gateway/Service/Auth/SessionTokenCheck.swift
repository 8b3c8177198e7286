import Bus
import Crypto
import Foundation
import Identity

/// A bearer token in JWS compact form (RFC 7515 §7.1), split and decoded once: what
/// ``Authenticator`` routes by its `alg` and ``SessionTokenCheck`` verifies, from the same parse.
///
/// As strict as Identity's `CompactJWS`: at most `CompactJWS.defaultMaximumLength` bytes, three
/// non-empty segments in canonical unpadded base64url, a JSON header whose `alg` is a string and
/// that has no `crit`. A token the gateway has not verified yet was parsed three times on its
/// way to Accounts' key (`CompactJWS` here and in `SessionTokenVerifier`, then jwt-kit), each
/// header and the claims through Foundation's decoder: a tenth of the gateway's CPU in round 1
/// of `deploy/bench-gateway`.
struct BearerJWS {
    struct Header: Decodable {
        let alg: String
        /// Nil when absent, or not a string (which names no key either).
        let kid: String?
        let hasCritical: Bool

        enum CodingKeys: String, CodingKey { case alg, kid, crit }

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            alg = try container.decode(String.self, forKey: .alg)
            kid = try? container.decodeIfPresent(String.self, forKey: .kid)
            hasCritical = container.contains(.crit) ? !(try container.decodeNil(forKey: .crit)) : false
        }
    }

    let header: Header
    /// `header "." payload` as sent: the bytes the signature covers.
    let signingInput: Data
    let payload: Data
    let signature: Data

    /// Nil when `token` is not a well-formed compact JWS.
    init?(_ token: String) {
        let utf8 = token.utf8
        guard utf8.count <= CompactJWS.defaultMaximumLength else { return nil }
        let segments = utf8.split(separator: UInt8(ascii: "."), maxSplits: 3, omittingEmptySubsequences: false)
        guard segments.count == 3, segments.allSatisfy({ !$0.isEmpty }) else { return nil }
        guard let headerBytes = Base64URL.decode(Substring(segments[0])), let payload = Base64URL.decode(Substring(segments[1])),
            let signature = Base64URL.decode(Substring(segments[2])),
            let header = try? BusJSON.decode(Header.self, from: headerBytes), !header.hasCritical
        else { return nil }
        self.header = header
        self.payload = payload
        self.signature = signature
        signingInput = Data(utf8[segments[0].startIndex..<segments[1].endIndex])
    }
}

/// What a session token's verified claims say (the fields of Identity's `SessionClaims` that
/// the gateway reads).
struct SessionTokenClaims: Decodable, Equatable {
    let sub: String
    let sid: String
    let iss: String
    /// One audience or several (RFC 7519 §4.1.3).
    let aud: [String]
    /// NumericDates: seconds since 1970, whole or fractional.
    let iat: Double
    let exp: Double
    let appleSub: String?

    enum CodingKeys: String, CodingKey {
        case sub, sid, iss, aud, iat, exp
        case appleSub = "apple_sub"
    }

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        sub = try container.decode(String.self, forKey: .sub)
        sid = try container.decode(String.self, forKey: .sid)
        iss = try container.decode(String.self, forKey: .iss)
        if let one = try? container.decode(String.self, forKey: .aud) {
            aud = [one]
        } else {
            aud = try container.decode([String].self, forKey: .aud)
        }
        iat = try container.decode(Double.self, forKey: .iat)
        exp = try container.decode(Double.self, forKey: .exp)
        appleSub = try container.decodeIfPresent(String.self, forKey: .appleSub)
    }

    var issuedAt: Date { Date(timeIntervalSince1970: iat) }
    var expiresAt: Date { Date(timeIntervalSince1970: exp) }
}

/// The gateway's check of a session token with Accounts' public keys: the checks of Identity's
/// `SessionTokenVerifier` in its order (`EdDSA` and a `kid` held, before any key is touched; the
/// Ed25519 signature; then issuer, audience, times with the leeway, a subject and a session), on
/// one ``BearerJWS`` parse, with swift-crypto's Ed25519 (the signer jwt-kit calls) and the bus's
/// JSON decoder, synchronously: no jwt-kit key collection (an actor) and no second or third parse.
/// `SessionTokenCheckTests` holds it to `SessionTokenVerifier`'s answers on the same tokens.
struct SessionTokenCheck: Sendable {
    let publicKeys: [String: Curve25519.Signing.PublicKey]
    let leeway: TimeInterval
    var issuer = SessionTokens.issuer
    var audience = SessionTokens.audience

    /// The claims of `jws` when one of ``publicKeys`` signed it and it is still valid; else the
    /// ``IdentityError`` `SessionTokenVerifier` would throw.
    func verify(_ jws: BearerJWS, now: Date = Date()) throws(IdentityError) -> SessionTokenClaims {
        guard jws.header.alg == "EdDSA" else { throw .unsupportedAlgorithm(String(jws.header.alg.prefix(16))) }
        guard let kid = jws.header.kid else { throw .malformed("missing kid") }
        guard let key = publicKeys[kid] else { throw .unknownKey }
        guard key.isValidSignature(jws.signature, for: jws.signingInput) else { throw .badSignature }
        guard let claims = try? BusJSON.decode(SessionTokenClaims.self, from: jws.payload) else { throw .malformed("invalid claims") }
        guard claims.iss == issuer else { throw .wrongIssuer }
        guard claims.aud.contains(audience) else { throw .wrongAudience }
        guard now < claims.expiresAt.addingTimeInterval(leeway) else { throw .expired }
        guard claims.issuedAt <= now.addingTimeInterval(leeway) else { throw .notYetValid }
        guard !claims.sub.isEmpty, !claims.sid.isEmpty else { throw .malformed("empty sub or sid") }
        return claims
    }
}
