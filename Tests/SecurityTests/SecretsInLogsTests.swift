import AppleStandIn
import Contracts
import Crypto
import Foundation
import GatewayTestSupport
import TestSupport
import Testing

extension SecurityTests {
    /// Known secret values in every process's configuration, the busiest log level, a sign-in, a
    /// sign-up, an acceptance, an upload, a share link and a refresh; then every line the five
    /// executables printed (stdout and stderr, up to their exit) is searched for each secret, its
    /// base64 and base64url forms and, for keys, the hex of their bytes.
    @Suite(.serialized) struct SecretsInLogsTests {
        static func random(_ count: Int) -> String { ForgedTokens.base64URL(GatewayHarness.randomBytes(count)) }

        /// The forms a secret could leak in. A token is looked for whole and by its last segment
        /// (the signature, or all of an opaque token): its header is the same for every token.
        static func forms(_ secret: String, isToken: Bool = false) -> [String] {
            if isToken { return [secret, String(secret.split(separator: ".").last ?? "")].filter { $0.count >= 16 } }
            var forms = [secret, Data(secret.utf8).base64EncodedString(), ForgedTokens.base64URL(Data(secret.utf8))]
            if let bytes = Data(base64Encoded: secret) {
                forms.append(bytes.map { String(format: "%02x", $0) }.joined())
                forms.append(ForgedTokens.base64URL(bytes))
            }
            // A long secret may be cut or wrapped: its first 24 characters are enough to tell.
            return forms.flatMap { $0.count > 24 ? [$0, String($0.prefix(24))] : [$0] }
        }

        @Test func noSecretReachesAnyLog() async throws {
            let jwtSecret = "jwt-secret-" + Self.random(30)
            let sessionSeed = Curve25519.Signing.PrivateKey().rawRepresentation.base64EncodedString()
            let auditSeed = Curve25519.Signing.PrivateKey().rawRepresentation.base64EncodedString()
            let databasePassword = "db-pw-" + Self.random(18)
            let applePrivateKey = P256.Signing.PrivateKey().pemRepresentation
            let sealingKey = GatewayHarness.randomBytes(32).base64EncodedString()
            var secrets: [String: String] = [
                "GATEWAY_JWT_SECRET": jwtSecret, "ACCOUNTS_SESSION_SIGNING_KEY": sessionSeed, "AUDIT_SIGNING_KEY": auditSeed,
                "database password": databasePassword, "ACCOUNTS_APPLE_TOKEN_KEYS": sealingKey,
            ]
            // The PEM's base64 lines (headers and line breaks aside).
            let pemLines = applePrivateKey.split(separator: "\n").filter { !$0.hasPrefix("-----") }
            for (index, line) in pemLines.enumerated() where line.count >= 20 { secrets["ACCOUNTS_APPLE_PRIVATE_KEY line \(index)"] = String(line) }
            let verbose = ["LOG_LEVEL": "trace"]
            let accounts = verbose.merging([
                "ACCOUNTS_SESSION_SIGNING_KEY": sessionSeed, "ACCOUNTS_APPLE_TEAM_ID": "TEAM123456", "ACCOUNTS_APPLE_KEY_ID": "KEY1234567",
                "ACCOUNTS_APPLE_PRIVATE_KEY": applePrivateKey, "ACCOUNTS_APPLE_TOKEN_KEYS": "t1=" + sealingKey,
                "ACCOUNTS_APPLE_BASE_URL": "http://127.0.0.1:9",
            ]) { _, new in new }
            try await GatewayHarness.run(
                gateway: verbose.merging(["GATEWAY_JWT_SECRET": jwtSecret]) { _, new in new }, accounts: accounts,
                audit: verbose.merging(["AUDIT_SIGNING_KEY": auditSeed]) { _, new in new }, documents: verbose,
                databasePassword: databasePassword
            ) { harness in
                let http = harness.http
                // Sign in with Apple (the identity token is a credential too), sign up, accept, upload, share, refresh.
                let appleId = "apple.secret." + UUID().uuidString
                let identityToken = try AppleStandIn.token(subject: appleId)
                let session = try await http.send("POST", "/api/auth/apple", json: ["identityToken": identityToken])
                #expect(session.status == 200)
                let sessionToken = try #require(session.json["sessionToken"] as? String)
                let refreshToken = try #require(session.json["refreshToken"] as? String)
                let terms = try await harness.currentTerms()
                let signUp = try await http.send(
                    "POST", "/api/users",
                    json: [
                        "apple_id": appleId, "email": "s@example.com", "name": "Sam", "state": "AL", "eligibility_certified": true,
                        "tos_version": terms,
                    ],
                    headers: HTTPClient.bearer(sessionToken))
                #expect(signUp.status == 200, "\(signUp.text)")
                let userId = try #require(signUp.json["id"] as? String)
                let user = GatewayHarness.User(id: userId, token: sessionToken)
                let accepted = try await http.send("PUT", "/api/users/\(userId)/accept-tos", json: ["tos_version": terms], headers: user.auth)
                #expect(accepted.status == 200, "\(accepted.text)")
                let privacy = try await harness.legalClient.call(LegalCurrent.self, .init(type: .privacyPolicy)).summary.version
                let acknowledged = try await http.send(
                    "POST", "/api/me/consents/privacy_policy/acknowledge", json: ["version": privacy], headers: user.auth)
                #expect(acknowledged.status == 201)
                let documentId = try await harness.upload(GatewayHarness.randomBytes(10_000), as: user)
                let link = try await http.send(
                    "POST", "/api/documents/\(documentId)/share-links", json: ["expiresInSeconds": 600], headers: user.auth)
                let shareURL = try #require(link.json["url"] as? String)
                #expect(try await http.get(shareURL).status == 200)
                let fileUrl = GatewayHarness.storedFileUrl(
                    try #require(try await http.get("/api/documents/\(documentId)", headers: user.auth).json["fileUrl"] as? String))
                let signed = try await http.send("POST", "/storage/v1/object/sign/\(fileUrl)", json: ["expiresIn": 600], headers: user.auth)
                let signedURL = try #require(signed.json["signedURL"] as? String)
                #expect(try await http.get("/storage/v1" + signedURL).status == 200)
                // Failures log too: a bad token, a forged anon key, a wrong refresh token.
                #expect(try await http.get("/api/me", headers: HTTPClient.bearer(ForgedTokens.flippedSignature(sessionToken))).status == 401)
                #expect(try await http.send("POST", "/api/auth/refresh", json: ["refreshToken": refreshToken + "x"]).status == 401)
                let refreshed = try await http.send("POST", "/api/auth/refresh", json: ["refreshToken": refreshToken])
                #expect(refreshed.status == 200)
                let newSession = refreshed.json["sessionToken"] as? String ?? ""
                #expect(try await http.send("POST", "/api/auth/sign-out", headers: HTTPClient.bearer(newSession)).status == 200)

                let tokens = [
                    "session token": sessionToken, "refreshed session token": newSession, "refresh token": refreshToken,
                    "Apple identity token": identityToken, "share token": String(shareURL.split(separator: "/").last ?? ""),
                    "signed URL token": String(signedURL.split(separator: "=").last ?? "").removingPercentEncoding ?? "",
                ]
                // What the gateway serves to anyone is searched too: health, readiness, metrics,
                // the API description, and error bodies.
                var outputs: [String: String] = [:]
                for path in ["/healthz", "/readyz", "/metrics", "/openapi.json", "/api/shared/nope", "/rest/v1/documents"] {
                    outputs["GET " + path] = try await http.get(path).text
                }
                outputs["a refused refresh"] = try await http.send("POST", "/api/auth/refresh", json: ["refreshToken": refreshToken]).text
                // Every process's output, up to its exit (shutdown logs included).
                for name in ["Gateway", "Documents", "Accounts", "Audit", "Legal"] { outputs[name] = await harness.stopCollectingOutput(name) }
                let lines = outputs.filter { !$0.key.contains(" ") }.values.reduce(0) { $0 + $1.split(separator: "\n").count }
                #expect(lines > 20, "too little output to judge: \(lines) lines")
                var checked = 0
                let searched = secrets.map { ($0.key, Self.forms($0.value)) } + tokens.map { ($0.key, Self.forms($0.value, isToken: true)) }
                for (name, forms) in searched.sorted(by: { $0.0 < $1.0 }) {
                    for form in forms {
                        checked += 1
                        for (process, output) in outputs where output.contains(form) {
                            Issue.record("\(process)'s output contains the \(name) (as \(form.prefix(6))…)")
                        }
                    }
                }
                let sizes = outputs.filter { !$0.key.contains(" ") }.sorted { $0.key < $1.key }.map {
                    "\($0.key) \($0.value.split(separator: "\n").count)"
                }.joined(separator: ", ")
                print(
                    "SECURITY secrets in logs: \(secrets.count) configured secrets and \(tokens.count) tokens in \(checked) forms searched in \(lines) log lines at LOG_LEVEL=trace (\(sizes)) and \(outputs.count - 5) public responses: none found"
                )
            }
        }
    }
}
