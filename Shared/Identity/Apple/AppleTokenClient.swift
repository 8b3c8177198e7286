import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Why a call to Apple's token endpoints failed. No case carries a token or secret.
public enum AppleTokenError: Error, Sendable, Equatable {
    /// Apple answered with an error status; `error` is Apple's `error` member (`invalid_grant`, ...).
    case refused(status: Int, error: String?)
    /// No answer (connection refused, timeout, TLS).
    case unreachable
    /// The answer was not what Apple documents (e.g. no `refresh_token`).
    case unexpectedResponse
}

/// Apple's token endpoints (`{base}/auth/token`, `{base}/auth/revoke`) as Sign in with Apple needs
/// them: exchanging the app's authorization code for a refresh token, and revoking that token when
/// the account is deleted. Form-encoded POSTs with a fresh ``AppleClientSecret`` each time.
///
/// `URLSession` (FoundationNetworking on Linux) runs transfers on its own threads; awaiting one
/// suspends the task without holding a cooperative-pool thread.
public struct AppleTokenClient: Sendable {
    public static let defaultBaseURL = URL(string: "https://appleid.apple.com")!

    public let baseURL: URL
    public let secret: AppleClientSecret
    public let timeout: TimeInterval

    public init(baseURL: URL = AppleTokenClient.defaultBaseURL, secret: AppleClientSecret, timeout: TimeInterval = 10) {
        self.baseURL = baseURL
        self.secret = secret
        self.timeout = timeout
    }

    /// What the code exchange gives back that we keep.
    public struct Grant: Sendable, Equatable {
        public let refreshToken: String
        /// Apple's identity token for the person who authorized the code (verify before trusting it).
        public let idToken: String?
    }

    /// Exchanges an authorization code (valid five minutes, once) for Apple's refresh token.
    public func exchange(code: String) async throws -> Grant {
        let clientSecret = try await secret.make()
        let data = try await post(
            "auth/token",
            [
                ("client_id", secret.clientID), ("client_secret", clientSecret), ("code", code),
                ("grant_type", "authorization_code"),
            ])
        struct Reply: Decodable {
            let refresh_token: String?
            let id_token: String?
        }
        guard let reply = try? JSONDecoder().decode(Reply.self, from: data), let token = reply.refresh_token, !token.isEmpty else {
            throw AppleTokenError.unexpectedResponse
        }
        return Grant(refreshToken: token, idToken: reply.id_token)
    }

    /// Revokes a refresh token (Apple answers 200 also for a token already revoked).
    public func revoke(refreshToken: String) async throws {
        let clientSecret = try await secret.make()
        _ = try await post(
            "auth/revoke",
            [
                ("client_id", secret.clientID), ("client_secret", clientSecret), ("token", refreshToken),
                ("token_type_hint", "refresh_token"),
            ])
    }

    private func post(_ path: String, _ fields: [(String, String)]) async throws -> Data {
        var request = URLRequest(url: baseURL.appendingPathComponent(path), timeoutInterval: timeout)
        request.httpMethod = "POST"
        request.setValue("application/x-www-form-urlencoded", forHTTPHeaderField: "Content-Type")
        request.setValue("application/json", forHTTPHeaderField: "Accept")
        request.httpBody = Data(Self.formEncode(fields).utf8)
        let data: Data
        let response: URLResponse
        do {
            (data, response) = try await URLSession.shared.data(for: request)
        } catch {
            throw AppleTokenError.unreachable
        }
        guard let http = response as? HTTPURLResponse else { throw AppleTokenError.unexpectedResponse }
        guard http.statusCode == 200 else {
            struct Failure: Decodable { let error: String? }
            let code = (try? JSONDecoder().decode(Failure.self, from: data))?.error.map { String($0.prefix(64)) }
            throw AppleTokenError.refused(status: http.statusCode, error: code)
        }
        return data
    }

    /// `application/x-www-form-urlencoded`: everything but unreserved characters percent-encoded.
    static func formEncode(_ fields: [(String, String)]) -> String {
        let allowed = CharacterSet(charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")
        return fields.map { name, value in
            "\(name)=\(value.addingPercentEncoding(withAllowedCharacters: allowed) ?? "")"
        }.joined(separator: "&")
    }
}
