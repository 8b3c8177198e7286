import Bus
import Contracts
import Foundation
import Logging

/// `accounts.accept_terms_batch`: each item is an `accounts.accept_terms` (same checks, same
/// reply), but the whole batch is stored by one statement and one commit
/// (``AccountsStore/accept(_:)``): the users' standing, the idempotency keys and each act in the
/// consent stream, for Audit to chain. Nothing waits for Audit; the reply follows the commit.
struct TermsBatch: Sendable {
    let store: AccountsStore
    let peers: Peers
    let backlog: ConsentBacklog
    let signal: ConsentSignal

    func accept(_ items: [AccountsAcceptTermsBatch.Item], logger: Logger) async -> [ItemOutcome<AccountUser>] {
        var outcomes = [ItemOutcome<AccountUser>?](repeating: nil, count: items.count)
        func fail(_ index: Int, _ error: any Error) { outcomes[index] = failure(error, logger: logger) }
        if let refusal = backlog.refusal() { return items.map { _ in ItemOutcome(error: refusal) } }
        let current: String
        do {
            current = try await peers.currentTermsVersion(expecting: items.first?.request.tosVersion)
        } catch {
            return items.map { _ in failure(error, logger: logger) }
        }
        var accepted: [(index: Int, item: AcceptanceItem)] = []
        for (index, item) in items.enumerated() {
            do {
                let key = try TermsActions.checked(item.request, key: item.idempotencyKey)
                let request = item.request
                guard request.tosVersion == current else { throw SignUpValidation.staleTerms(request.tosVersion, current: current) }
                accepted.append(
                    (
                        index,
                        AcceptanceItem(
                            user: request.userId, version: current, key: TermsActions.streamKey(.accept, key),
                            clientIP: request.clientIP, userAgent: request.userAgent, recordId: .timeOrdered())
                    ))
            } catch {
                fail(index, error)
            }
        }
        guard !accepted.isEmpty else { return outcomes.map { $0! } }
        let results: [UUID: AcceptanceResult]
        do {
            results = try await store.accept(accepted.map(\.item))
        } catch {
            for (index, _) in accepted { fail(index, error) }
            return outcomes.map { $0! }
        }
        if results.values.contains(where: \.written) { signal.committed() }
        for (index, item) in accepted {
            do {
                guard let result = results[item.user] else { throw try await store.missing(item.user) }
                outcomes[index] = ItemOutcome(value: try await TermsActions.view(of: result, current: current, peers: peers))
            } catch {
                fail(index, error)
            }
        }
        return outcomes.map { $0! }
    }

    /// An item's error as its caller sees it; anything but a bus error is logged (it reaches the
    /// caller as `internal`).
    private func failure(_ error: any Error, logger: Logger) -> ItemOutcome<AccountUser> {
        if !(error is BusError) { logger.warning("accept_terms_batch item failed", metadata: ["error": "\(error)"]) }
        return ItemOutcome(error: BusError(converting: error, internalMessage: "internal error in accounts.accept_terms_batch"))
    }
}
