import Bus
import Contracts
import Foundation

/// How Accounts reaches Legal (the terms in effect) and Audit (erasures). Acts are not sent to
/// Audit: Audit reads them from the consent stream (``ConsentsSinceHandler``).
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
}
