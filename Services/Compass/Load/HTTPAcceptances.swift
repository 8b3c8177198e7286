import Bus
import Contracts
import Foundation
import LoadKit
import Locks

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// `compass load acceptances --via http`: the same load through the gateway's seed 004 routes, as
/// the app sends it: users signed up first (`POST /api/users`), then `PUT /api/users/{id}/accept-tos`
/// with an `Idempotency-Key` per call. The seed routes need credentials unless the gateway runs with
/// `GATEWAY_LEGACY_UNAUTHENTICATED_CLIENTS=true`, so this is for test deployments.
final class HTTPAcceptances: Sendable {
    let base: URL
    let session: URLSession
    let version: String
    let users: [UUID]
    /// Acknowledged acceptances per user, for the stored check.
    let acknowledged = LockedValue<[UUID: Int]>([:])

    init(base: URL, session: URLSession, version: String, users: [UUID]) {
        self.base = base
        self.session = session
        self.version = version
        self.users = users
    }

    static func prepare(gateway: String, users count: Int) async throws -> HTTPAcceptances {
        guard let base = URL(string: gateway), base.scheme == "http" || base.scheme == "https" else {
            throw CLIError("--gateway \(gateway) is not an http(s) URL")
        }
        let configuration = URLSessionConfiguration.ephemeral
        configuration.httpMaximumConnectionsPerHost = 256
        configuration.timeoutIntervalForRequest = 30
        let session = URLSession(configuration: configuration)
        let (terms, status) = try await send(session, "GET", base.appendingPathComponent("api/terms"), body: nil)
        guard status == 200, let version = (try? JSONSerialization.jsonObject(with: terms) as? [String: Any])?["version"] as? String else {
            throw CLIError("GET \(base)/api/terms answered \(status): is the gateway there?")
        }
        var users: [UUID] = []
        for index in 0..<count {
            let body: [String: Any] = [
                "apple_id": "compass-load.\(UUID().uuidString)", "email": "load\(index)@example.com", "name": "Load Test",
                "state": "CA", "eligibility_certified": true, "tos_version": version,
            ]
            let (reply, status) = try await send(session, "POST", base.appendingPathComponent("api/users"), body: body)
            if status == 401 {
                throw CLIError(
                    "the gateway refused an unauthenticated sign-up (401): --via http needs a test deployment with GATEWAY_LEGACY_UNAUTHENTICATED_CLIENTS=true"
                )
            }
            guard status == 200, let text = (try? JSONSerialization.jsonObject(with: reply) as? [String: Any])?["id"] as? String,
                let id = UUID(uuidString: text)
            else { throw CLIError("POST /api/users answered \(status): \(String(decoding: reply.prefix(300), as: UTF8.self))") }
            users.append(id)
        }
        return HTTPAcceptances(base: base, session: session, version: version, users: users)
    }

    var driver: LoadDriver {
        LoadDriver { [self] index in
            let user = users[index % users.count]
            let url = base.appendingPathComponent("api/users/\(user.uuidString.lowercased())/accept-tos")
            do {
                let (_, status) = try await Self.send(session, "PUT", url, body: ["tos_version": version], key: UUID().uuidString)
                guard status == 200 else { return "http_\(status)" }
                self.acknowledged.withLock { $0[user, default: 0] += 1 }
                return nil
            } catch {
                return "http_transport"
            }
        }
    }

    /// Whether every acknowledged acceptance is stored: each user's accept records in Audit (over
    /// the bus) must be at least the acceptances acknowledged to them plus the one of the sign-up.
    /// An acknowledged acceptance is durable in Accounts' consent stream and chained by Audit after
    /// the reply, so a user still short is read again until `chaining` has passed: only what is
    /// still missing then counts as lost. How long the chaining took is in the report.
    func check(with bus: BusAccess, chaining: Duration = .seconds(60)) async throws -> StoredCheck {
        let client = try await bus.client(for: .audit)
        defer { Task { await client.close() } }
        let started = ContinuousClock.now
        var short = acknowledged.withLock { $0 }
        var stored: [UUID: Int] = [:]
        while true {
            for (user, count) in short {
                stored[user] = try await acceptances(of: user, on: client, principal: bus.principal)
                if stored[user, default: 0] >= count + 1 { short[user] = nil }
            }
            guard !short.isEmpty, ContinuousClock.now - started < chaining else { break }
            try await Task.sleep(for: .milliseconds(500))
        }
        var result = StoredCheck()
        result.waited = ContinuousClock.now - started
        for (user, count) in acknowledged.withLock({ $0 }) {
            result.checked += count
            let missing = max(0, count + 1 - stored[user, default: 0])
            if missing > 0 {
                result.missing += missing
                if result.examples.count < 5 { result.examples.append("\(user): \(count) acknowledged, \(stored[user, default: 0] - 1) stored") }
            }
        }
        return result
    }

    /// The user's accept records of the terms in Audit, every page of them.
    private func acceptances(of user: UUID, on client: RPCClient, principal: Principal) async throws -> Int {
        var stored = 0
        var cursor: String?
        repeat {
            let page = try await client.call(
                AuditHistory.self, .init(userId: user, documentType: .termsOfService, limit: 500, before: cursor),
                principal: principal, timeout: .seconds(30))
            stored += page.records.filter { $0.receipt.action == .accept }.count
            cursor = page.next
        } while cursor != nil
        return stored
    }

    static func send(
        _ session: URLSession, _ method: String, _ url: URL, body: [String: Any]?, key: String? = nil
    ) async throws -> (Data, Int) {
        var request = URLRequest(url: url)
        request.httpMethod = method
        if let body {
            request.httpBody = try JSONSerialization.data(withJSONObject: body)
            request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        }
        if let key { request.setValue(key, forHTTPHeaderField: "Idempotency-Key") }
        request.setValue("compass-load", forHTTPHeaderField: "User-Agent")
        let (data, response) = try await session.data(for: request)
        return (data, (response as? HTTPURLResponse)?.statusCode ?? 0)
    }
}
