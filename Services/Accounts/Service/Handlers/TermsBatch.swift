import Bus
import Contracts
import Foundation
import Logging

/// `accounts.accept_terms_batch`: each item is an `accounts.accept_terms` (same checks, same Audit
/// key, same reply), but the batch costs one read of its users, one `audit.record_batch` call and
/// one statement that stores every acceptance, instead of that many per item. Items that need more
/// (a user whose sign-up acceptance is still to be recorded, an account that is gone) take the
/// one-by-one path, so their answers are exactly what `accept_terms` gives.
struct TermsBatch: Sendable {
    let store: AccountsStore
    let peers: Peers
    let single: TermsActions

    func accept(_ items: [AccountsAcceptTermsBatch.Item], logger: Logger) async -> [ItemOutcome<AccountUser>] {
        var outcomes = [ItemOutcome<AccountUser>?](repeating: nil, count: items.count)
        func fail(_ index: Int, _ error: any Error) { outcomes[index] = failure(error, logger: logger) }
        var callKeys: [Int: String] = [:]
        for (index, item) in items.enumerated() {
            do { callKeys[index] = try TermsActions.checked(item.request, key: item.idempotencyKey) } catch { fail(index, error) }
        }
        let checkedItems = callKeys.keys.sorted()
        let current: String
        let users: [UUID: StoredUser]
        do {
            current = try await peers.currentTermsVersion(expecting: items.first?.request.tosVersion)
            users = try await store.users(ids: Array(Set(checkedItems.map { items[$0].request.userId })))
        } catch {
            for index in checkedItems { fail(index, error) }
            return outcomes.map { $0! }
        }
        var batched: [Int] = []
        var oneByOne: [Int] = []
        for index in checkedItems {
            let request = items[index].request
            guard let user = users[request.userId] else {
                oneByOne.append(index)  // gone or unknown: the single path finds out which
                continue
            }
            guard request.tosVersion == current else {
                fail(index, SignUpValidation.staleTerms(request.tosVersion, current: current))
                continue
            }
            if user.signupReceiptId == nil && user.tosVersion != nil { oneByOne.append(index) } else { batched.append(index) }
        }
        for (index, outcome) in await record(batched, of: items, keys: callKeys, current: current, logger: logger) {
            outcomes[index] = outcome
        }
        for index in oneByOne {
            do {
                outcomes[index] = ItemOutcome(value: try await single.act(.accept, items[index].request, key: callKeys[index]))
            } catch {
                fail(index, error)
            }
        }
        return outcomes.map { $0! }
    }

    /// Records `indices` through Audit in one call, then stores the acceptances in one statement;
    /// the outcome of each index.
    private func record(
        _ indices: [Int], of items: [AccountsAcceptTermsBatch.Item], keys: [Int: String], current: String, logger: Logger
    ) async -> [Int: ItemOutcome<AccountUser>] {
        var outcomes: [Int: ItemOutcome<AccountUser>] = [:]
        func fail(_ index: Int, _ error: any Error) { outcomes[index] = failure(error, logger: logger) }
        guard !indices.isEmpty else { return outcomes }
        let records = indices.map { index in
            let request = items[index].request
            return AuditRecordBatch.Item(
                record: .init(
                    userId: request.userId, documentType: .termsOfService, version: current, action: .accept,
                    clientIP: request.clientIP, userAgent: request.userAgent),
                idempotencyKey: TermsActions.auditKey(.accept, keys[index]!))
        }
        let receipts: [ItemOutcome<ConsentReceipt>]
        do {
            receipts = try await peers.recordBatch(records)
        } catch {
            for index in indices { fail(index, error) }
            return outcomes
        }
        guard receipts.count == indices.count else {
            for index in indices { fail(index, BusError(.internal, "audit.record_batch answered \(receipts.count) of \(indices.count) records")) }
            return outcomes
        }
        var recorded: [(index: Int, receipt: ConsentReceipt)] = []
        for (index, outcome) in zip(indices, receipts) {
            do { recorded.append((index, try outcome.get())) } catch { fail(index, error) }
        }
        let stored: [UUID: StoredUser]
        do {
            stored = try await store.accepted(recorded.map { (items[$0.index].request.userId, $0.receipt.version, $0.receipt.recordedAt) })
        } catch {
            for (index, _) in recorded { fail(index, error) }
            return outcomes
        }
        let removed = recorded.map { items[$0.index].request.userId }.filter { stored[$0] == nil }
        var removalErrors: [UUID: BusError] = [:]
        if !removed.isEmpty {
            do { removalErrors = try await store.recordedAfterRemoval(removed) } catch {
                for (index, _) in recorded where stored[items[index].request.userId] == nil { fail(index, error) }
            }
        }
        for (index, receipt) in recorded where outcomes[index] == nil {
            do {
                let id = items[index].request.userId
                guard let user = stored[id] else { throw removalErrors[id] ?? AccountsHandlers.unknown(id) }
                outcomes[index] = ItemOutcome(
                    value: try await TermsActions.view(of: user, acceptedVersion: receipt.version, current: current, peers: peers))
            } catch {
                fail(index, error)
            }
        }
        return outcomes
    }

    /// An item's error as its caller sees it; anything but a bus error is logged (it reaches the
    /// caller as `internal`).
    private func failure(_ error: any Error, logger: Logger) -> ItemOutcome<AccountUser> {
        if !(error is BusError) { logger.warning("accept_terms_batch item failed", metadata: ["error": "\(error)"]) }
        return ItemOutcome(error: BusError(converting: error, internalMessage: "internal error in accounts.accept_terms_batch"))
    }
}
