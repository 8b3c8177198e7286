import Bus
import Contracts
import Foundation

/// How Accounts reaches Legal (the terms in effect) and Audit (consent records and status).
/// Clients are made on first use, so the service starts while its peers are still starting.
struct Peers: Sendable {
    let legal: @Sendable () async throws -> RPCClient
    let audit: @Sendable () async throws -> RPCClient
    /// The terms versions Legal published, so the version in effect is known without a call.
    let terms: TermsCatalog

    init(legal: @escaping @Sendable () async throws -> RPCClient, audit: @escaping @Sendable () async throws -> RPCClient) {
        self.legal = legal
        self.audit = audit
        self.terms = TermsCatalog(legal: legal)
    }

    /// The terms of service version in effect now; `unavailable` when none is. `expected` (the
    /// version the caller sent) is answered from ``TermsCatalog`` when it is the one in effect there;
    /// any other answer comes from Legal.
    func currentTermsVersion(expecting expected: String?) async throws -> String {
        try await terms.current(expecting: expected)
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

    /// Records many acts in one Audit call, each with its own key and outcome. The receipts come
    /// back unsigned: Accounts keeps only their version and time.
    func recordBatch(_ items: [AuditRecordBatch.Item]) async throws -> [ItemOutcome<ConsentReceipt>] {
        try await audit().call(AuditRecordBatch.self, .init(items: items, signReceipts: false), principal: .service("accounts")).outcomes
    }

    /// Where `user` stands with the terms, as Audit knows it.
    func termsStatus(of user: UUID) async throws -> AcceptanceStatus? {
        let reply = try await audit().call(AuditStatus.self, .init(userId: user), principal: .user(user.uuidString.lowercased()))
        return reply.documents.first { $0.documentType == .termsOfService }
    }
}
