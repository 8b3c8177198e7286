import Bus
import Contracts
import Foundation
import Locks
import ServiceKit

/// Wakes the long polls of `accounts.consents_since` when an act or deletion commits on this
/// instance. A commit on another instance is found when the poll's wait ends (at most
/// ``AccountsConsentsSince/maximumWaitMilliseconds``; Audit asks with 1 s).
final class ConsentSignal: Sendable {
    private struct State {
        var generation = 0
        var waiters: [UUID: CheckedContinuation<Void, Never>] = [:]
    }
    private let state = LockedValue(State())

    /// The count of commits so far: a poll reads it before it reads the stream, and waits only
    /// if no commit came in between.
    var generation: Int { state.withLock { $0.generation } }

    /// An entry committed: every poll waiting now looks again.
    func committed() {
        let waiting = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            state.generation += 1
            defer { state.waiters.removeAll() }
            return Array(state.waiters.values)
        }
        for waiter in waiting { waiter.resume() }
    }

    /// Returns at the first commit after `generation`, or after `limit`.
    func wait(after generation: Int, atMost limit: Duration) async {
        let id = UUID()
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let registered = state.withLock { state -> Bool in
                guard state.generation == generation else { return false }
                state.waiters[id] = continuation
                return true
            }
            guard registered else { return continuation.resume() }
            Task { [state] in
                try? await Task.sleep(for: limit)
                state.withLock { $0.waiters.removeValue(forKey: id) }?.resume()
            }
        }
    }
}

/// `accounts.consents_since` (``AccountsConsentsSince``) and `accounts.consents_pending`
/// (``AccountsConsentsPending``): for the Audit service and operators, since the entries carry
/// users' IP addresses and agents.
struct ConsentsSinceHandler: Sendable {
    let store: AccountsStore
    let signal: ConsentSignal
    /// Where this instance's last pruning of the stream ended (every row up to it is gone).
    let pruned = LockedValue(ConsentStreamPosition.start)

    func register(on server: RPCServer) {
        server.register(AccountsConsentsPending.self) { request, context in
            try Self.authorize(context)
            return AccountsConsentsPending.Reply(latest: try await store.lastPendingConsent(of: request.userId))
        }
        server.register(AccountsConsentsSince.self) { request, context in
            try Self.authorize(context)
            let (chained, numbered, after) = (request.after, request.afterSequence, request.readAfter ?? request.after)
            guard chained.transaction >= 0, chained.entry >= 0, numbered.map({ $0 >= 0 && chained == .start }) ?? true, after >= chained,
                (1...AccountsConsentsSince.maximumLimit).contains(request.limit),
                (0...AccountsConsentsSince.maximumWaitMilliseconds).contains(request.waitMilliseconds)
            else {
                throw BusError(
                    .invalidArgument,
                    "after's numbers must be ≥ 0, readAfter at least after, afterSequence ≥ 0 and only with after at the start, limit 1 to \(AccountsConsentsSince.maximumLimit), waitMilliseconds 0 to \(AccountsConsentsSince.maximumWaitMilliseconds)"
                )
            }
            let generation = signal.generation
            let from = pruned.withLock { $0 }
            var page = try await store.consents(after: after, chained: chained, numbered: numbered, pruned: from, limit: request.limit)
            pruned.withLock { $0 = max($0, chained) }
            if page.entries.isEmpty && request.waitMilliseconds > 0 {
                await signal.wait(after: generation, atMost: .milliseconds(request.waitMilliseconds))
                page = try await store.consents(after: after, chained: chained, pruned: max(from, chained), limit: request.limit)
            }
            return AccountsConsentsSince.Reply(entries: page.entries, latest: page.latest, remaining: page.remaining)
        }
    }

    /// The stream's entries carry users' IP addresses and agents: for Audit and operators only.
    private static func authorize(_ context: BusRequestContext) throws {
        guard context.principal == .service(ServiceName.audit.rawValue) || context.principal.kind == .operator else {
            throw BusError(.forbidden, "the consent stream is for the audit service and operators")
        }
    }
}
