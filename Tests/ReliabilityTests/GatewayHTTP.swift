import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A URLSession client of one running gateway (FoundationNetworking: libcurl on its own threads),
/// for the requests the fault tests send over HTTP. A restarted gateway listens on a new port, so
/// it needs a new client.
struct GatewayHTTP: Sendable {
    let base: String
    private let session: URLSession

    init(port: Int, connections: Int) {
        base = "http://127.0.0.1:\(port)"
        let configuration = URLSessionConfiguration.ephemeral
        configuration.requestCachePolicy = .reloadIgnoringLocalCacheData
        configuration.urlCache = nil
        configuration.httpMaximumConnectionsPerHost = connections
        configuration.timeoutIntervalForRequest = 30
        session = URLSession(configuration: configuration)
    }

    /// Seed 004's `PUT /api/users/{id}/accept-tos` with an `Idempotency-Key`; the status code.
    /// Throws when no response came (refused or cut connection).
    func acceptTerms(user: UUID, version: String, key: String) async throws -> Int {
        var request = URLRequest(url: URL(string: "\(base)/api/users/\(user.uuidString.lowercased())/accept-tos")!)
        request.httpMethod = "PUT"
        request.httpBody = try JSONSerialization.data(withJSONObject: ["tos_version": version])
        request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        request.setValue(key, forHTTPHeaderField: "Idempotency-Key")
        let (_, response) = try await session.data(for: request)
        guard let http = response as? HTTPURLResponse else { throw URLError(.badServerResponse) }
        return http.statusCode
    }

    func close() { session.invalidateAndCancel() }
}
