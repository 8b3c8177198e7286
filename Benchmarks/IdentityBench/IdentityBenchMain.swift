import BenchSupport
import Crypto
import Foundation
import Identity
import Logging
import _CryptoExtras

/// Times the token work on the request path, one operation at a time in one task: verifying a
/// session token (uncached: the gateway's check of a token it has not seen, and Accounts'
/// `verify_session`), reading the claims of one the gateway relayed from Accounts (no signature
/// check: what a sign-in or refresh through the gateway costs it instead), issuing one (every
/// sign-in and refresh), and verifying a Sign in with Apple
/// identity token against a key set already loaded (every sign-in). Then the signature algorithms
/// alone, over a session token's signing input: Ed25519 (what session tokens use) and RSA-2048 with
/// SHA-256 (RS256, what Apple's tokens use), signing and checking. A check is what every token
/// new to a gateway costs, a signature what every sign-in and refresh costs; the two algorithms
/// trade them the other way round, which is the lead this measures for a wave's first requests.
///
/// `swift run -c release identity-bench --iterations 2000 --rounds 5` prints, per operation, the
/// median over rounds of the nanoseconds per operation, and every round's figure.
@main
enum IdentityBench {
    static func main() async throws {
        let iterations = BenchArguments.int("--iterations", default: 2000)
        let rounds = BenchArguments.int("--rounds", default: 5)

        let sessions = SessionTokens(keys: try SessionKeySet(current: try SessionSigningKey.generate(id: "bench")))
        let (sessionToken, _) = try await sessions.issue(userID: UUID().uuidString, sessionID: UUID().uuidString, appleSubject: "001.bench")
        let verifier = sessions.verifier

        let apple = try await AppleSetup()
        let appleToken = try apple.token()

        var results: [(String, [Double])] = []
        results.append(
            (
                "verify session token (uncached)",
                try await measure(rounds: rounds, iterations: iterations) { _ = try await verifier.verify(sessionToken) }
            ))
        results.append(
            (
                "read an issued token's claims (no signature check)",
                try await measure(rounds: rounds, iterations: iterations) {
                    _ = try verifier.claims(ofTokenIssuedByAccounts: try CompactJWS(parsing: sessionToken))
                }
            ))
        results.append(
            (
                "sign session token",
                try await measure(rounds: rounds, iterations: iterations) {
                    _ = try await sessions.issue(userID: "user", sessionID: "session", appleSubject: "001.bench")
                }
            ))
        results.append(
            (
                "verify Apple identity token",
                try await measure(rounds: rounds, iterations: max(iterations / 4, 1)) {
                    _ = try await apple.verifier.verify(appleToken, nonce: AppleSetup.nonce)
                }
            ))
        let input = Data(sessionToken.split(separator: ".").prefix(2).joined(separator: ".").utf8)
        let ed25519 = Curve25519.Signing.PrivateKey()
        let ed25519Signature = try ed25519.signature(for: input)
        let ed25519Public = ed25519.publicKey
        let rsa = apple.key
        let rsaSignature = try rsa.signature(for: SHA256.hash(data: input), padding: .insecurePKCS1v1_5)
        let rsaPublic = rsa.publicKey
        // Checked once outside the timing: a check that failed would time the wrong path.
        guard ed25519Public.isValidSignature(ed25519Signature, for: input),
            rsaPublic.isValidSignature(rsaSignature, for: SHA256.hash(data: input), padding: .insecurePKCS1v1_5)
        else { throw BenchFailure("a signature made here did not verify") }
        results.append(
            (
                "Ed25519 check alone",
                try await measure(rounds: rounds, iterations: iterations) {
                    guard ed25519Public.isValidSignature(ed25519Signature, for: input) else { throw BenchFailure("Ed25519 check failed") }
                }
            ))
        results.append(
            (
                "RSA-2048 SHA-256 check alone (RS256)",
                try await measure(rounds: rounds, iterations: iterations) {
                    guard rsaPublic.isValidSignature(rsaSignature, for: SHA256.hash(data: input), padding: .insecurePKCS1v1_5) else {
                        throw BenchFailure("RSA check failed")
                    }
                }
            ))
        results.append(
            (
                "Ed25519 signature alone",
                try await measure(rounds: rounds, iterations: iterations) { _ = try ed25519.signature(for: input) }
            ))
        results.append(
            (
                "RSA-2048 SHA-256 signature alone (RS256)",
                try await measure(rounds: rounds, iterations: max(iterations / 8, 1)) {
                    _ = try rsa.signature(for: SHA256.hash(data: input), padding: .insecurePKCS1v1_5)
                }
            ))
        for (name, perRound) in results {
            let sorted = perRound.sorted()
            let median = sorted[sorted.count / 2]
            let all = perRound.map { String(Int($0)) }.joined(separator: " ")
            print("\(name): median \(Int(median)) ns/op (rounds: \(all))")
        }
    }

    /// Nanoseconds per call of `body`, one figure per round (after one warm-up round).
    static func measure(rounds: Int, iterations: Int, _ body: @Sendable () async throws -> Void) async throws -> [Double] {
        let clock = ContinuousClock()
        var figures: [Double] = []
        for round in 0...rounds {
            let start = clock.now
            for _ in 0..<iterations { try await body() }
            let elapsed = clock.now - start
            let nanoseconds = Double(elapsed.components.seconds) * 1e9 + Double(elapsed.components.attoseconds) / 1e9
            if round > 0 { figures.append(nanoseconds / Double(iterations)) }
        }
        return figures
    }
}

/// Apple's side: an RSA-2048 key, its JWKS in a temporary file, an identity token it signed.
struct AppleSetup {
    static let bundleID = "com.recruitingcompass.app"
    static let nonce = "bench-nonce"

    let key: _RSA.Signing.PrivateKey
    let verifier: AppleIdentityVerifier

    init() async throws {
        key = try _RSA.Signing.PrivateKey(keySize: .bits2048)
        let primitives = try key.publicKey.getKeyPrimitives()
        let jwks: [String: Any] = [
            "keys": [
                [
                    "kty": "RSA", "kid": "A", "use": "sig", "alg": "RS256",
                    "n": Base64URL.encode(primitives.modulus), "e": Base64URL.encode(primitives.publicExponent),
                ]
            ]
        ]
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("identity-bench-\(UUID().uuidString).json").path
        try JSONSerialization.data(withJSONObject: jwks).write(to: URL(fileURLWithPath: path))
        let logger = Logger(label: "identity-bench") { _ in SwiftLogNoOpLogHandler() }
        let cache = AppleKeyCache(source: .file(path: path), logger: logger)
        verifier = AppleIdentityVerifier(audiences: [Self.bundleID], keys: cache, logger: logger)
        _ = try await cache.reload()
        try? FileManager.default.removeItem(atPath: path)
    }

    /// A token like a first sign-in's, valid for ten minutes.
    func token() throws -> String {
        let now = Int(Date().timeIntervalSince1970)
        let claims: [String: Any] = [
            "iss": "https://appleid.apple.com", "aud": Self.bundleID, "sub": "001234.abcdef0123456789.0042", "iat": now,
            "exp": now + 600, "auth_time": now, "email": "x7q2@privaterelay.appleid.com", "email_verified": "true",
            "is_private_email": true, "nonce": SHA256.hash(data: Data(Self.nonce.utf8)).map { String(format: "%02x", $0) }.joined(),
        ]
        let header = try JSONSerialization.data(withJSONObject: ["alg": "RS256", "kid": "A", "typ": "JWT"], options: .sortedKeys)
        let payload = try JSONSerialization.data(withJSONObject: claims, options: .sortedKeys)
        let input = Base64URL.encode(header) + "." + Base64URL.encode(payload)
        let signature = try key.signature(for: SHA256.hash(data: Data(input.utf8)), padding: .insecurePKCS1v1_5)
        return input + "." + Base64URL.encode(signature.rawRepresentation)
    }
}

/// A benchmark that would time the wrong thing: it stops with this instead.
struct BenchFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
