import Crypto
import Foundation
import Identity
import Testing
import _CryptoExtras

/// Apple's server-to-server notification JWTs: every check of ``AppleNotificationVerifier``.
struct AppleNotificationVerifierTests {
    static func claims(
        events: Any = [
            "type": "email-disabled", "sub": "001.abc.002", "email": "x@privaterelay.appleid.com",
            "is_private_email": "true", "event_time": 1_700_000_000,
        ],
        iss: String = "https://appleid.apple.com", aud: String = AppleFixture.bundleID, iat: Date = Date()
    ) throws -> [String: Any] {
        let eventsText: String
        if let text = events as? String {
            eventsText = text
        } else {
            eventsText = String(decoding: try JSONSerialization.data(withJSONObject: events), as: UTF8.self)
        }
        return ["iss": iss, "aud": aud, "iat": Int(iat.timeIntervalSince1970), "jti": "j1", "events": eventsText]
    }

    static func verify(_ token: String, in directory: TemporaryDirectory) async throws -> AppleServerNotification {
        let path = directory.file("jwks.json")
        try AppleFixture.writeJWKS([("A", AppleFixture.keyA)], to: path)
        let verifier = AppleNotificationVerifier(
            audiences: [AppleFixture.bundleID], keys: AppleKeyCache(source: .file(path: path), logger: quietLogger))
        return try await verifier.verify(token)
    }

    @Test func aValidNotificationGivesItsEvent() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let notification = try await Self.verify(try AppleFixture.token(claims: try Self.claims()), in: directory)
        #expect(notification.type == "email-disabled" && notification.subject == "001.abc.002" && notification.tokenID == "j1")
        #expect(notification.isPrivateEmail == true && notification.eventTime == Date(timeIntervalSince1970: 1_700_000_000))
    }

    @Test func everyCheckRefuses() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let cases: [(String, IdentityError)] = [
            (try AppleFixture.token(claims: try Self.claims(), key: AppleFixture.keyB), .badSignature),
            (try AppleFixture.token(claims: try Self.claims(iss: "https://evil.example")), .wrongIssuer),
            (try AppleFixture.token(claims: try Self.claims(aud: "com.other.app")), .wrongAudience),
            (try AppleFixture.token(claims: try Self.claims(iat: Date().addingTimeInterval(3600))), .notYetValid),
            (try AppleFixture.token(claims: try Self.claims(), kid: "Z"), .unknownKey),
        ]
        for (token, expected) in cases {
            #expect(try await thrownAsync { try await Self.verify(token, in: directory) } == expected)
        }
        for events in ["not json", #"{"type":"email-disabled"}"#, #"{"type":"","sub":"x","event_time":1}"#] {
            let token = try AppleFixture.token(claims: try Self.claims(events: events))
            #expect(try await thrownAsync { try await Self.verify(token, in: directory) }?.isMalformed == true)
        }
        let hs256 = try AppleFixture.token(claims: try Self.claims(), alg: "HS256")
        #expect(try await thrownAsync { try await Self.verify(hs256, in: directory) } == .unsupportedAlgorithm("HS256"))
    }
}

/// The ES256 client secret Apple's token endpoints take, checked as Apple would.
struct AppleClientSecretTests {
    @Test func theSecretIsAnES256JWTWithApplesClaims() async throws {
        let key = P256.Signing.PrivateKey()
        let secret = try AppleClientSecret(teamID: "TEAM", keyID: "KID", clientID: "com.example.app", privateKeyPEM: key.pemRepresentation)
        let now = Date(timeIntervalSince1970: 1_700_000_000)
        let token = try await secret.make(now: now)
        let parts = token.split(separator: ".").map(String.init)
        let header = try JSONSerialization.jsonObject(with: try #require(Base64URL.decode(parts[0]))) as? [String: Any]
        let claims = try JSONSerialization.jsonObject(with: try #require(Base64URL.decode(parts[1]))) as? [String: Any]
        #expect(header?["alg"] as? String == "ES256" && header?["kid"] as? String == "KID")
        #expect(claims?["iss"] as? String == "TEAM" && claims?["sub"] as? String == "com.example.app")
        #expect(claims?["aud"] as? String == "https://appleid.apple.com")
        #expect(claims?["iat"] as? Int == 1_700_000_000 && claims?["exp"] as? Int == 1_700_000_300)
        let signature = try P256.Signing.ECDSASignature(rawRepresentation: try #require(Base64URL.decode(parts[2])))
        #expect(key.publicKey.isValidSignature(signature, for: Data("\(parts[0]).\(parts[1])".utf8)))
        #expect(!"\(secret)".contains("BEGIN"))
        #expect(throws: IdentityError.self) { try AppleClientSecret(teamID: "T", keyID: "K", clientID: "c", privateKeyPEM: "nope") }
    }
}
