import Bus
import Contracts
import Foundation
import Identity
import Logging
import Metrics
import ServiceKit
import ServiceLifecycle

/// Revokes the Apple refresh tokens of deleted accounts at `{base}/auth/revoke`, in the
/// background: a deletion only marks the token due (in its own transaction) and never depends on
/// Apple. A failed attempt is retried after the next wait of `backoff`; after the last one the
/// token is given up (logged as an error, counted as `given_up`). Either way the sealed token is
/// then deleted and the deletion's certificate re-signed with the outcome (`revoked` or
/// `revocation_failed`), in one transaction. Woken after each deletion, and sweeps every
/// `interval` for anything due (retries, a crash in between).
struct AppleTokenRevoker: PeriodicSweep {
    let store: AccountsStore
    /// Re-signs the deletion certificate once the revocation settles.
    let certifier: DeletionCertifier
    /// Nil when Apple's endpoints are not configured: due tokens then fail and are given up.
    let apple: AppleTokenSettings?
    let backoff: [Duration]
    let interval: Duration
    let logger: Logger
    static let revoked = Counter(label: "accounts_apple_revocations_total", dimensions: [("outcome", "revoked")])
    static let retried = Counter(label: "accounts_apple_revocations_total", dimensions: [("outcome", "retry")])
    static let givenUp = Counter(label: "accounts_apple_revocations_total", dimensions: [("outcome", "given_up")])

    /// Tries every revocation due now.
    func sweep() async {
        do {
            for due in try await store.claimRevocations(limit: 50, leaseSeconds: 120) { await attempt(due) }
        } catch {
            logger.warning("could not read the apple token revocations due", metadata: ["error": "\(error)"])
        }
    }

    private func attempt(_ due: DueRevocation) async {
        do {
            guard let apple else { throw AppleTokenError.unreachable }
            let token = String(decoding: try apple.box.open(due.sealedToken, context: due.id.uuidString.lowercased()), as: UTF8.self)
            try await apple.client.revoke(refreshToken: token)
            try await store.settleRevocation(
                due, grant: AppleGrantRevocation(status: .revoked, attempts: due.attempts + 1, settledAt: Date()), certifier: certifier)
            Self.revoked.increment()
            logger.info("apple token revoked", metadata: ["token": "\(due.id)"])
        } catch {
            let attempts = due.attempts + 1
            do {
                if attempts > backoff.count || error as? IdentityError == .decryptionFailed {
                    try await store.settleRevocation(
                        due, grant: AppleGrantRevocation(status: .revocationFailed, attempts: attempts, settledAt: Date()), certifier: certifier)
                    Self.givenUp.increment()
                    logger.error(
                        "apple token revocation given up",
                        metadata: [
                            "token": "\(due.id)", "attempts": "\(attempts)", "error": "\(error)",
                        ])
                } else {
                    try await store.revocationFailed(due.id, attempts: attempts, retryAfterMilliseconds: backoff[attempts - 1].inMilliseconds)
                    Self.retried.increment()
                    logger.warning(
                        "apple token revocation failed; will retry",
                        metadata: [
                            "token": "\(due.id)", "attempts": "\(attempts)", "error": "\(error)",
                        ])
                }
            } catch {
                logger.warning("could not record the apple token revocation attempt", metadata: ["error": "\(error)"])
            }
        }
    }
}
