import Foundation
import Identity
import Testing
import _CryptoExtras

/// Loading Apple's key set from a file: refresh on an unknown key id, bounded by the interval.
@Suite struct AppleKeyCacheTests {
    @Test func unknownKidReloadsTheUpdatedKeySet() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.file("keys.json")
        try AppleFixture.writeJWKS([("A", AppleFixture.keyA)], to: path)
        let verifier = AppleFixture.verifier(jwksPath: path, minimumRefreshInterval: .zero)
        _ = try await verifier.verify(try AppleFixture.token(kid: "A"))

        let tokenB = try AppleFixture.token(kid: "B", key: AppleFixture.keyB)
        #expect(try await thrownAsync { try await verifier.verify(tokenB) } == .unknownKey)
        // Apple rotates: the file now lists the new key (and keeps the old one).
        try AppleFixture.writeJWKS([("A", AppleFixture.keyA), ("B", AppleFixture.keyB)], to: path)
        let claims = try await verifier.verify(tokenB)
        #expect(claims.subject == "001234.abcdef0123456789.0042")
        _ = try await verifier.verify(try AppleFixture.token(kid: "A"))
    }

    @Test func unknownKidsDoNotReloadMoreOftenThanTheInterval() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.file("keys.json")
        try AppleFixture.writeJWKS([("A", AppleFixture.keyA)], to: path)
        let verifier = AppleFixture.verifier(jwksPath: path, minimumRefreshInterval: .seconds(3600))
        _ = try await verifier.verify(try AppleFixture.token(kid: "A"))

        try AppleFixture.writeJWKS([("B", AppleFixture.keyB)], to: path)
        let tokenB = try AppleFixture.token(kid: "B", key: AppleFixture.keyB)
        // The first load was just now, so the new file is not read: B stays unknown, A still works.
        #expect(try await thrownAsync { try await verifier.verify(tokenB) } == .unknownKey)
        _ = try await verifier.verify(try AppleFixture.token(kid: "A"))
    }

    @Test func withdrawnKeyStopsVerifyingOnceTheSetIsOld() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.file("keys.json")
        try AppleFixture.writeJWKS([("A", AppleFixture.keyA), ("B", AppleFixture.keyB)], to: path)
        let cache = AppleKeyCache(source: .file(path: path), minimumRefreshInterval: .zero, maximumAge: .zero, logger: quietLogger)
        let verifier = AppleIdentityVerifier(audiences: [AppleFixture.bundleID], keys: cache, logger: quietLogger)
        let tokenA = try AppleFixture.token(kid: "A")
        _ = try await verifier.verify(tokenA)
        try AppleFixture.writeJWKS([("B", AppleFixture.keyB)], to: path)
        #expect(try await thrownAsync { try await verifier.verify(tokenA) } == .unknownKey)
    }

    @Test func concurrentVerificationsShareTheFirstLoad() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.file("keys.json")
        try AppleFixture.writeJWKS([("A", AppleFixture.keyA)], to: path)
        let verifier = AppleFixture.verifier(jwksPath: path)
        let token = try AppleFixture.token()
        let subjects = try await withThrowingTaskGroup(of: String.self) { group in
            for _ in 0..<16 { group.addTask { try await verifier.verify(token).subject } }
            return try await group.reduce(into: [String]()) { $0.append($1) }
        }
        #expect(subjects.count == 16 && Set(subjects) == ["001234.abcdef0123456789.0042"])
    }

    @Test func missingOrInvalidKeySetIsUnavailable() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let missing = AppleFixture.verifier(jwksPath: directory.file("absent.json"))
        let token = try AppleFixture.token()
        #expect(try await thrownAsync { try await missing.verify(token) } == .keySetUnavailable("key set file unreadable"))

        let path = directory.file("garbage.json")
        try Data("{\"keys\": 42}".utf8).write(to: URL(fileURLWithPath: path))
        let garbage = AppleFixture.verifier(jwksPath: path)
        #expect(try await thrownAsync { try await garbage.verify(token) } == .keySetUnavailable("not a JSON Web Key Set"))
    }

    @Test func keySetSkipsKeysItCannotUse() throws {
        var ecKey = try AppleFixture.jwk(kid: "EC", key: AppleFixture.keyB)
        ecKey["kty"] = "EC"
        var encryptionKey = try AppleFixture.jwk(kid: "ENC", key: AppleFixture.keyB)
        encryptionKey["use"] = "enc"
        let document: [String: Any] = ["keys": [try AppleFixture.jwk(kid: "A", key: AppleFixture.keyA), ecKey, encryptionKey]]
        let set = try JSONWebKeySet(json: try JSONSerialization.data(withJSONObject: document))
        #expect(Set(set.keys.keys) == ["A"])

        let weak = try _RSA.Signing.PrivateKey(unsafeKeySize: .init(bitCount: 1024))
        let weakOnly: [String: Any] = ["keys": [try AppleFixture.jwk(kid: "W", key: weak)]]
        #expect(
            try thrown { try JSONWebKeySet(json: try JSONSerialization.data(withJSONObject: weakOnly)) } == .keySetUnavailable("no usable RS256 key"))
    }

    @Test func keySourceConfiguration() throws {
        #expect(try AppleKeySource(configuration: "/etc/compass/apple-keys.json") == .file(path: "/etc/compass/apple-keys.json"))
        #expect(try AppleKeySource(configuration: "https://appleid.apple.com/auth/keys") == .apple)
        #expect(try thrown { try AppleKeySource(configuration: "http://appleid.apple.com/auth/keys") } != nil)
    }
}
