import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Where Apple's public keys come from: a JWKS file (tests, air-gapped deployments that sync the
/// file) or an https URL (normally `https://appleid.apple.com/auth/keys`).
public enum AppleKeySource: Sendable, Equatable {
    case file(path: String)
    case url(URL)

    /// Apple's published key set.
    public static let apple = AppleKeySource.url(URL(string: "https://appleid.apple.com/auth/keys")!)

    /// Reads a configuration value: an `https://` URL, or else a file path. Plain `http` is refused:
    /// keys fetched without TLS could be anyone's.
    public init(configuration value: String) throws {
        if value.hasPrefix("https://"), let url = URL(string: value) {
            self = .url(url)
        } else if value.contains("://") {
            throw IdentityError.invalidKey("key set location must be an https URL or a file path")
        } else {
            self = .file(path: value)
        }
    }

    /// Loads and parses the key set.
    func load(timeout: TimeInterval) async throws -> JSONWebKeySet {
        switch self {
        case .file(let path):
            guard let data = FileManager.default.contents(atPath: path) else {
                throw IdentityError.keySetUnavailable("key set file unreadable")
            }
            return try JSONWebKeySet(json: data)
        case .url(let url):
            // URLSession runs its transfers on its own threads (libcurl on Linux); the await only
            // suspends this task, it does not block a cooperative-pool thread.
            var request = URLRequest(url: url, timeoutInterval: timeout)
            request.setValue("application/json", forHTTPHeaderField: "Accept")
            let data: Data
            let response: URLResponse
            do {
                (data, response) = try await URLSession.shared.data(for: request)
            } catch {
                throw IdentityError.keySetUnavailable("key set fetch failed")
            }
            guard let http = response as? HTTPURLResponse, http.statusCode == 200 else {
                throw IdentityError.keySetUnavailable("key set fetch returned an error status")
            }
            return try JSONWebKeySet(json: data)
        }
    }
}
