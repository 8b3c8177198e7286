import Bus
import Contracts
import Foundation
import LoadKit

/// `compass load acceptances --via accounts`: acceptances as the gateway makes them, over the bus
/// to Accounts: the users made in bulk (``BulkUsers``), each acceptance an item gathered with the
/// ones that arrive while the previous batch is under way into one `accounts.accept_terms_batch`
/// call (group commit, no timer, at most one batch in flight per client socket), each with its own
/// idempotency key. Latency counts per acceptance, from its arrival to its item's answer.
struct AccountsAcceptances {
    let users: [UUID]
    let version: String
    let batchers: [AcceptBatcher]

    var driver: LoadDriver {
        LoadDriver { [users, version, batchers] index in
            let request = AccountsTermsRequest(
                userId: users[index % users.count], tosVersion: version, clientIP: BulkUsers.clientIP, userAgent: BulkUsers.userAgent)
            let item = AccountsAcceptTermsBatch.Item(request: request, idempotencyKey: MessageID.text(of: MessageID.make()))
            do {
                _ = try await batchers[index % batchers.count].accept(item).get()
                return nil
            } catch let error as BusError {
                return error.code.rawValue
            } catch {
                return "client"
            }
        }
    }
}

/// Gathers the items that arrive while a batch is in flight into the next one, as the gateway does.
actor AcceptBatcher {
    private typealias Waiter = CheckedContinuation<ItemOutcome<AccountUser>, any Error>
    private let client: RPCClient
    private let principal: Principal
    private var pending: [(item: AccountsAcceptTermsBatch.Item, waiter: Waiter)] = []
    private var inFlight = false
    private(set) var batches = 0
    private(set) var items = 0

    init(client: RPCClient, principal: Principal) {
        self.client = client
        self.principal = principal
    }

    func accept(_ item: AccountsAcceptTermsBatch.Item) async throws -> ItemOutcome<AccountUser> {
        try await withCheckedThrowingContinuation { (waiter: Waiter) in
            pending.append((item, waiter))
            if !inFlight { sendNext() }
        }
    }

    private func sendNext() {
        guard !pending.isEmpty else {
            inFlight = false
            return
        }
        inFlight = true
        let batch = Array(pending.prefix(AccountsAcceptTermsBatch.maximumItems))
        pending.removeFirst(batch.count)
        batches += 1
        items += batch.count
        let (client, principal) = (client, principal)
        Task {
            do {
                let reply = try await client.call(
                    AccountsAcceptTermsBatch.self, .init(items: batch.map(\.item)), principal: principal, timeout: .seconds(30))
                for (index, entry) in batch.enumerated() {
                    entry.waiter.resume(
                        returning: index < reply.outcomes.count
                            ? reply.outcomes[index] : ItemOutcome(error: BusError(.internal, "no outcome for this item")))
                }
            } catch {
                for entry in batch { entry.waiter.resume(throwing: error) }
            }
            sendNext()  // the task runs on this actor: the next batch leaves as this one is answered
        }
    }
}
