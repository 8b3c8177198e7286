import ServiceKit

/// How far the consent stream may run ahead of Audit, and how long a call that answers with a
/// receipt waits for its record to be chained.
public struct ConsentSettings: Sendable {
    /// Entries Audit has not chained beyond which acts are refused (`unavailable`, retry hint).
    public let backlogLimit: Int
    /// How often the backlog is counted (and the lag metrics set).
    public let backlogInterval: Duration
    /// How long a sign-up, `accounts.accept_terms` and `accounts.decline_terms` wait for Audit to chain the act.
    public let receiptWait: Duration

    init(environment env: EnvironmentReader) throws {
        backlogLimit = try env.int(
            "ACCOUNTS_CONSENT_BACKLOG_LIMIT", default: 500_000, in: 1...100_000_000,
            "Acceptances and declines written but not yet chained by Audit beyond which new ones are refused with `unavailable` (HTTP 503 with Retry-After) until Audit catches up: the stream never grows without bound while Audit is down. At 10,000 acts a second that is 50 s of a full wave; at ordinary rates, hours."
        )
        backlogInterval = try env.duration(
            "ACCOUNTS_CONSENT_BACKLOG_INTERVAL", default: .seconds(1),
            "How often the unchained backlog is counted (accounts_consent_backlog, accounts_consent_chain_lag_seconds) and the limit checked.")
        receiptWait = try env.duration(
            "ACCOUNTS_CONSENT_RECEIPT_WAIT", default: .seconds(2),
            "How long a sign-up, accounts.accept_terms and accounts.decline_terms wait for Audit to chain the act, so what the caller reads next (the consent routes' signed receipt, the consent status) shows it; the act is stored either way. The batch path (accept-tos) does not wait."
        )
    }
}
