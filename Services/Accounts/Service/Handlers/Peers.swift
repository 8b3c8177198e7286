import Bus
import Contracts
import Foundation

/// How Accounts reaches Legal (the terms in effect) and Audit (consent records and status).
/// Clients are made on first use, so the service starts while its peers are still starting.
struct Peers: Sendable {
    let legal: @Sendable () async throws -> RPCClient
    let audit: @Sendable () async throws -> RPCClient

    /// The terms of service version in effect now; `unavailable` when none is.
    func currentTermsVersion() async throws -> String {
        do {
            return try await legal().call(LegalCurrent.self, .init(type: .termsOfService)).summary.version
        } catch let error as BusError where error.code == .notFound {
            throw BusError(.unavailable, "no terms of service are in effect yet")
        }
    }

    /// Records `action` on terms `version` for `user`. `key` makes a retry record once.
    func record(_ action: AcceptanceAction, user: UUID, version: String, key: String, clientIP: String?, userAgent: String?)
        async throws -> ConsentReceipt
    {
        try await audit().call(
            AuditRecord.self,
            .init(userId: user, documentType: .termsOfService, version: version, action: action, clientIP: clientIP, userAgent: userAgent),
            principal: .user(user.uuidString.lowercased()), idempotencyKey: key)
    }

    /// Where `user` stands with the terms, as Audit knows it.
    func termsStatus(of user: UUID) async throws -> AcceptanceStatus? {
        let reply = try await audit().call(AuditStatus.self, .init(userId: user), principal: .user(user.uuidString.lowercased()))
        return reply.documents.first { $0.documentType == .termsOfService }
    }
}
