import Crypto
import Foundation
import Identity
import Locks
import TestSupport

/// Stands in for Apple's token endpoints (`/auth/token`, `/auth/revoke`) on 127.0.0.1: checks the
/// form fields and the client secret (an ES256 JWT that must verify with the team key's public
/// half and carry Apple's documented claims), hands out refresh tokens, and records revocations.
/// Apple is external, so a stand-in is the real thing's only substitute here. Shared by the
/// Accounts tests and the gateway's end-to-end tests.
public final class AppleTokenStandIn: Sendable {
    public static let teamID = "TEAM123456"
    public static let keyID = "KEY9876543"
    /// The team's Sign in with Apple key (P-256), made once per run.
    public static let teamKey = P256.Signing.PrivateKey()
    /// A code the stand-in refuses (`invalid_grant`).
    public static let refusedCode = "expired-code"

    private struct State {
        var exchanges: [String] = []
        var revoked: [String] = []
        var revokeAttempts = 0
        var failRevocations = 0
        var problems: [String] = []
        var subjects: [String: String] = [:]
    }

    private let state = LockedValue(State())
    private let server: LockedValue<LoopbackHTTPServer?> = LockedValue(nil)

    public init() throws {
        let server = try LoopbackHTTPServer { [weak self] request in
            self?.handle(request) ?? (500, Data())
        }
        self.server.withLock { $0 = server }
    }

    public var baseURL: String { server.withLock { $0?.baseURL ?? "" } }

    public func stop() { server.withLock { $0?.stop() } }

    /// Accounts settings that point at this stand-in, with a fresh sealing key.
    public var environment: [String: String] {
        [
            "ACCOUNTS_APPLE_BASE_URL": baseURL, "ACCOUNTS_APPLE_TEAM_ID": Self.teamID, "ACCOUNTS_APPLE_KEY_ID": Self.keyID,
            "ACCOUNTS_APPLE_PRIVATE_KEY": Self.teamKey.pemRepresentation,
            "ACCOUNTS_APPLE_TOKEN_KEYS": "t1=\(SymmetricKey(size: .bits256).withUnsafeBytes { Data($0) }.base64EncodedString())",
            "ACCOUNTS_APPLE_REVOKE_BACKOFF": "100ms,200ms,200ms",
        ]
    }

    /// The refresh token handed out for `code`.
    public static func refreshToken(for code: String) -> String { "apple-refresh-\(code)" }

    /// Makes the exchange of `code` answer an `id_token` for `subject` (signed with
    /// ``AppleStandIn/key``, as Apple signs it); other codes get a placeholder.
    public func authorize(code: String, subject: String) { state.withLock { $0.subjects[code] = subject } }

    /// The next `count` revocations answer 503.
    public func failNextRevocations(_ count: Int) { state.withLock { $0.failRevocations = count } }
    public var revoked: [String] { state.withLock { $0.revoked } }
    public var revokeAttempts: Int { state.withLock { $0.revokeAttempts } }
    public var exchanges: [String] { state.withLock { $0.exchanges } }
    /// What was wrong with requests received (empty when every request was as Apple requires).
    public var problems: [String] { state.withLock { $0.problems } }

    private func handle(_ request: LoopbackHTTPRequest) -> (status: Int, body: Data) {
        let fields = request.formFields
        var problems: [String] = []
        if request.method != "POST" { problems.append("method \(request.method)") }
        if request.headers["content-type"] != "application/x-www-form-urlencoded" { problems.append("content type") }
        if fields["client_id"] != AppleStandIn.bundleID { problems.append("client_id") }
        if let problem = Self.checkClientSecret(fields["client_secret"]) { problems.append(problem) }
        let reply: (Int, Data)
        switch request.path {
        case "/auth/token":
            if fields["grant_type"] != "authorization_code" { problems.append("grant_type") }
            let code = fields["code"] ?? ""
            if code.isEmpty { problems.append("code") }
            state.withLock { $0.exchanges.append(code) }
            if code == Self.refusedCode || !problems.isEmpty {
                reply = (400, Data(#"{"error":"invalid_grant"}"#.utf8))
            } else {
                let idToken = state.withLock { $0.subjects[code] }.flatMap { try? AppleStandIn.token(subject: $0) } ?? "unused"
                let body: [String: Any] = [
                    "access_token": "access", "token_type": "Bearer", "expires_in": 3600,
                    "refresh_token": Self.refreshToken(for: code), "id_token": idToken,
                ]
                reply = (200, (try? JSONSerialization.data(withJSONObject: body)) ?? Data())
            }
        case "/auth/revoke":
            if fields["token_type_hint"] != "refresh_token" { problems.append("token_type_hint") }
            let token = fields["token"] ?? ""
            reply = state.withLock { state in
                state.revokeAttempts += 1
                if state.failRevocations > 0 {
                    state.failRevocations -= 1
                    return (503, Data(#"{"error":"temporarily_unavailable"}"#.utf8))
                }
                if problems.isEmpty { state.revoked.append(token) }
                return problems.isEmpty ? (200, Data()) : (400, Data(#"{"error":"invalid_client"}"#.utf8))
            }
        default:
            problems.append("path \(request.path)")
            reply = (404, Data())
        }
        if !problems.isEmpty { state.withLock { $0.problems += problems } }
        return reply
    }

    /// Nil when `secret` is an ES256 JWT signed by the team key with Apple's documented claims.
    public static func checkClientSecret(_ secret: String?) -> String? {
        guard let secret else { return "client_secret missing" }
        let parts = secret.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, let header = Base64URL.decode(parts[0]), let payload = Base64URL.decode(parts[1]),
            let signatureBytes = Base64URL.decode(parts[2]),
            let headerJSON = try? JSONSerialization.jsonObject(with: header) as? [String: Any],
            let claims = try? JSONSerialization.jsonObject(with: payload) as? [String: Any]
        else { return "client_secret malformed" }
        guard headerJSON["alg"] as? String == "ES256", headerJSON["kid"] as? String == keyID else { return "client_secret header" }
        guard let signature = try? P256.Signing.ECDSASignature(rawRepresentation: signatureBytes),
            teamKey.publicKey.isValidSignature(signature, for: Data("\(parts[0]).\(parts[1])".utf8))
        else { return "client_secret signature" }
        let now = Date().timeIntervalSince1970
        guard claims["iss"] as? String == teamID, claims["aud"] as? String == "https://appleid.apple.com",
            claims["sub"] as? String == AppleStandIn.bundleID, let iat = claims["iat"] as? Double, let exp = claims["exp"] as? Double,
            iat <= now + 5, exp > now, exp - iat <= 15_777_000
        else { return "client_secret claims" }
        return nil
    }
}
