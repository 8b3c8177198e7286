import Crypto
import Foundation
import GatewayTestSupport
import Postgres
import TestSupport
import Testing

extension SecurityTests {
    /// Bad session tokens on a representative route of each family (native, documents, tus, seed,
    /// PostgREST, Storage, a consent write): every one 401 with the family's error body, and
    /// nothing written.
    @Suite(.serialized) struct SessionTokenTests {
        /// One route to knock on, and how its 401 body must look.
        struct Door {
            let method: String
            let path: String
            var json: [String: any Sendable]? = nil
            var headers: [String: String] = [:]
            let family: String

            func check(_ reply: HTTPReply, _ what: String) {
                #expect(reply.status == 401, "\(what): \(method) \(path) answered \(reply.status) \(reply.text.prefix(200))")
                guard method != "HEAD" else { return }
                let body = reply.json
                switch family {
                case "seed":
                    #expect(body.count == 1 && body["error"] is String, "\(what): seed body \(reply.text)")
                case "postgrest":
                    #expect(body["code"] is String && body["message"] is String, "\(what): PostgREST body \(reply.text)")
                case "storage":
                    #expect(
                        body["statusCode"] as? String == "401" && body["error"] is String && body["message"] is String,
                        "\(what): Storage body \(reply.text)")
                default:
                    #expect(
                        body["error"] as? String == "unauthenticated" && body["message"] is String && body["requestId"] is String,
                        "\(what): native body \(reply.text)")
                    #expect(reply.header("WWW-Authenticate") == "Bearer", "\(what): no WWW-Authenticate on \(path)")
                }
            }
        }

        static func doors(user: GatewayHarness.User, objectPath: String, upload: String, terms: String) -> [Door] {
            [
                Door(method: "GET", path: "/api/me", family: "native"),
                Door(method: "GET", path: "/api/documents", family: "native"),
                Door(method: "POST", path: "/api/me/consents/terms_of_service/accept", json: ["version": terms], family: "native"),
                Door(method: "HEAD", path: upload, headers: ["Tus-Resumable": "1.0.0"], family: "native"),
                Door(method: "PUT", path: "/api/users/\(user.id)/accept-tos", json: ["tos_version": terms], family: "seed"),
                Door(method: "GET", path: "/rest/v1/documents?select=id", family: "postgrest"),
                Door(method: "GET", path: "/storage/v1/object/documents/\(objectPath)", family: "storage"),
            ]
        }

        /// `Authorization` for `token` (and `apikey` for PostgREST, which needs one).
        static func headers(_ door: Door, authorization: String?) -> [String: String] {
            var headers = door.headers
            if let authorization {
                headers["Authorization"] = authorization
                if door.family == "postgrest" { headers["apikey"] = String(authorization.drop { $0 != " " }.dropFirst()) }
            }
            return headers
        }

        @Test func badSessionTokensAreRefusedWith401() async throws {
            try await GatewayHarness.run { harness in
                let user = try await harness.user()
                let other = try await harness.user()
                let http = harness.http
                let terms = try await harness.currentTerms()
                let documentId = try await harness.upload(Data("mine".utf8), as: user)
                let fileUrl = GatewayHarness.storedFileUrl(
                    try #require(try await http.get("/api/documents/\(documentId)", headers: user.auth).json["fileUrl"] as? String))
                let objectPath = String(fileUrl.split(separator: "/", maxSplits: 1)[1])
                let upload = try await harness.tusCreate(user, length: 10)
                let doors = Self.doors(user: user, objectPath: objectPath, upload: upload, terms: terms)
                // The real token opens every door (so a 401 below is the token's fault).
                for door in doors {
                    let reply = try await http.send(
                        door.method, door.path, json: door.json, headers: Self.headers(door, authorization: "Bearer " + user.token))
                    #expect(
                        (200..<300).contains(reply.status), "control: \(door.method) \(door.path) answered \(reply.status) \(reply.text.prefix(200))")
                }

                let real = user.token
                let now = Int(Date().timeIntervalSince1970)
                let secret = SymmetricKey(data: Data(GatewayHarness.jwtSecret.utf8))
                func hs256(_ claims: [String: Any]) -> String {
                    let input =
                        ForgedTokens.base64URL(ForgedTokens.json(["alg": "HS256", "typ": "JWT"])) + "."
                        + ForgedTokens.base64URL(ForgedTokens.json(claims))
                    return input + "." + ForgedTokens.base64URL(Data(HMAC<Crypto.SHA256>.authenticationCode(for: Data(input.utf8), using: secret)))
                }
                let realSignature = String(real.split(separator: ".")[2])
                var cases: [(String, String?)] = [
                    (
                        "expired an hour ago",
                        "Bearer " + ForgedTokens.signed(ForgedTokens.sessionClaims(like: real, ["iat": now - 7200, "exp": now - 3600]))
                    ),
                    (
                        "expired past the 30 s leeway",
                        "Bearer " + ForgedTokens.signed(ForgedTokens.sessionClaims(like: real, ["iat": now - 1000, "exp": now - 120]))
                    ),
                    (
                        "issued an hour in the future",
                        "Bearer " + ForgedTokens.signed(ForgedTokens.sessionClaims(like: real, ["iat": now + 3600, "exp": now + 4000]))
                    ),
                    ("signature bit flipped", "Bearer " + ForgedTokens.flippedSignature(real)),
                    (
                        "payload changed to another user",
                        "Bearer " + ForgedTokens.swappedPayload(real, ForgedTokens.sessionClaims(like: real, ["sub": other.id]))
                    ),
                    (
                        "payload changed: expiry a year later",
                        "Bearer " + ForgedTokens.swappedPayload(real, ForgedTokens.sessionClaims(like: real, ["exp": now + 365 * 86400]))
                    ),
                    ("signature removed", "Bearer " + real.split(separator: ".").prefix(2).joined(separator: ".") + "."),
                    ("wrong audience", "Bearer " + ForgedTokens.signed(ForgedTokens.sessionClaims(like: real, ["aud": ["recruiting-compass-web"]]))),
                    (
                        "wrong audience (string)",
                        "Bearer " + ForgedTokens.signed(ForgedTokens.sessionClaims(like: real, ["aud": "com.example.other"]))
                    ),
                    ("wrong issuer", "Bearer " + ForgedTokens.signed(ForgedTokens.sessionClaims(like: real, ["iss": "https://appleid.apple.com"]))),
                    (
                        "unknown key, real kid",
                        "Bearer " + ForgedTokens.signed(ForgedTokens.sessionClaims(like: real), key: Curve25519.Signing.PrivateKey())
                    ),
                    (
                        "unknown kid",
                        "Bearer "
                            + ForgedTokens.signed(
                                ForgedTokens.sessionClaims(like: real), key: Curve25519.Signing.PrivateKey(),
                                header: ["alg": "EdDSA", "typ": "JWT", "kid": "s9"])
                    ),
                    ("alg none, no signature", "Bearer " + ForgedTokens.unsigned(ForgedTokens.sessionClaims(like: real))),
                    (
                        "alg none, the real signature",
                        "Bearer " + ForgedTokens.unsigned(ForgedTokens.sessionClaims(like: real), signature: realSignature)
                    ),
                    (
                        "alg None (case)",
                        "Bearer " + ForgedTokens.signed(ForgedTokens.sessionClaims(like: real), header: ["alg": "None", "kid": "s1"])
                    ),
                    (
                        "HS256 with the gateway's JWT secret, session claims",
                        "Bearer " + hs256(ForgedTokens.sessionClaims(like: real, ["role": "authenticated"]))
                    ),
                    (
                        "HS256 anon-role token under another secret",
                        "Bearer " + ForgedTokens.base64URL(ForgedTokens.json(["alg": "HS256", "typ": "JWT"])) + "."
                            + ForgedTokens.base64URL(ForgedTokens.json(["role": "anon"])) + "."
                            + ForgedTokens.base64URL(
                                Data(HMAC<Crypto.SHA256>.authenticationCode(for: Data("x".utf8), using: SymmetricKey(size: .bits256))))
                    ),
                    ("missing", nil),
                    ("scheme only", "Bearer"),
                    ("empty token", "Bearer "),
                    ("Basic scheme", "Basic dXNlcjpwYXNzd29yZA=="),
                    ("Token scheme with the real token", "Token " + real),
                    ("two segments", "Bearer " + real.split(separator: ".").prefix(2).joined(separator: ".")),
                    ("four segments", "Bearer " + real + ".AAAA"),
                    ("not base64", "Bearer !!!.???.***"),
                    ("9 KiB token", "Bearer " + String(repeating: "A", count: 9 * 1024) + ".e30.AAAA"),
                    ("token with trailing garbage", "Bearer " + real + " x"),
                ]

                // Revoked by sign-out.
                let signedOut = try await harness.user()
                let out = try await http.send("POST", "/api/auth/sign-out", headers: signedOut.auth)
                #expect(out.status == 200, "sign-out answered \(out.status) \(out.text)")
                cases.append(("revoked by sign-out", "Bearer " + signedOut.token))
                // After account deletion.
                let deleted = try await harness.user()
                let request = try await http.send("POST", "/api/me/deletion", headers: deleted.auth)
                let requestId = try #require(request.json["requestId"] as? String)
                let confirmed = try await http.send("POST", "/api/me/deletion/\(requestId)/confirm", headers: deleted.auth)
                #expect(confirmed.status == 200, "confirm answered \(confirmed.status) \(confirmed.text)")
                cases.append(("after account deletion", "Bearer " + deleted.token))

                // Counted after the sign-ups above (each records an acceptance).
                let recordsBefore = try await Self.auditRecords(harness)
                var refused = 0
                for (name, authorization) in cases {
                    for door in doors {
                        // The revoked users' tokens on their own routes where the path names a user.
                        let reply = try await http.send(
                            door.method, door.path, json: door.json, headers: Self.headers(door, authorization: authorization))
                        door.check(reply, name)
                        if reply.status == 401 { refused += 1 }
                    }
                }
                #expect(try await Self.auditRecords(harness) == recordsBefore, "a refused request wrote an audit record")
                // Still fine for the real token afterwards.
                #expect(try await http.get("/api/me", headers: user.auth).status == 200)
                print(
                    "SECURITY session tokens: \(cases.count) bad credentials × \(doors.count) routes = \(cases.count * doors.count) requests, \(refused) answered 401; audit records unchanged (\(recordsBefore))"
                )
            }
        }

        /// Audit's records once it has chained every act Accounts acknowledged (it does so after the reply).
        static func auditRecords(_ harness: GatewayHarness) async throws -> Int {
            try await harness.waitForChained()
            return try await harness.database.pool.withConnection { db in
                try db.query("SELECT count(*)::bigint FROM audit.records")[0].decode(Int.self, column: 0)
            }
        }
    }
}
