import Bus
import Contracts
import Foundation
import Logging
import ServiceKit

/// Keeps the gateway's ``SessionVerifier`` current: loads Accounts' public keys and the complete
/// revocation list (`accounts.session_revocations`), then applies Accounts' outbox events in order:
/// live from its PUB socket (milliseconds), and by catching up (`accounts.events.since`) every
/// ``tickInterval`` and on any gap, since pub/sub alone drops messages. Each catch-up that reaches
/// Accounts' latest event marks the list fresh; when none has for the verifier's
/// `maximumStaleness`, tokens go to Accounts again until one does.
package struct SessionRevocationFollower: Follower {
    let verifier: SessionVerifier
    let client: RPCClient
    package let events: EventSubscriber
    /// How often it catches up when no gap showed one was needed.
    package let tickInterval: Duration
    /// How often the public keys are loaded again (a rotated-in key is answered by Accounts until then).
    let keyInterval: Duration
    let logger: Logger

    /// When the public keys were last loaded (nil: not yet).
    package func start() -> ContinuousClock.Instant? { nil }

    package func follow(_ input: FollowerInput, _ keysLoadedAt: inout ContinuousClock.Instant?) async {
        do {
            if keysLoadedAt.map({ ContinuousClock.now - $0 > keyInterval }) ?? true {
                verifier.useKeys(try await client.call(AccountsPublicKeys.self, Empty(), principal: .service("gateway")).sessionKeys)
                keysLoadedAt = .now
            }
            if verifier.withRevocations({ $0.sequence == nil }) { try await load() }
            switch input {
            case .tick: try await catchUp()
            case .event(let event):
                if try !apply([event]) { try await catchUp() } else { verifier.markSynced() }
            }
        } catch {
            logger.debug("session revocations not current; tokens are checked by Accounts meanwhile", metadata: ["error": "\(error)"])
        }
    }

    /// The complete list as Accounts has it now.
    private func load() async throws {
        let since = Date().addingTimeInterval(-verifier.withRevocations { $0.retention })
        let reply = try await client.call(AccountsSessionRevocations.self, .init(since: since), principal: .service("gateway"))
        let leeway = verifier.leeway
        verifier.withRevocations { $0.load(reply, leeway: leeway) }
        logger.info(
            "session revocations loaded", metadata: ["entries": "\(reply.sessions.count + reply.users.count)", "sequence": "\(reply.sequence)"])
    }

    /// Fetches and applies pages until Accounts' latest event is applied, then marks the list fresh.
    private func catchUp() async throws {
        while true {
            guard let after = verifier.withRevocations({ $0.sequence }) else { return }
            let page = try await client.events(of: ServiceName.accounts.rawValue, after: after, principal: .service("gateway"))
            _ = try apply(page.events)
            let reached = verifier.withRevocations { $0.sequence ?? 0 }
            if reached >= page.latestSequence {
                verifier.withRevocations { $0.prune(now: Date()) }
                verifier.markSynced()
                return
            }
            if reached == after { throw BusError(.internal, "events.since returned no event after \(after) below \(page.latestSequence)") }
        }
    }

    /// Applies the events that continue the list without a gap; false when one is missing.
    private func apply(_ events: [Envelope]) throws -> Bool {
        for event in events {
            guard let number = event.sequence else { continue }
            switch verifier.withRevocations({ $0.order(of: number) }) {
            case .seen: continue
            case .gap: return false
            case .next:
                switch event.type {
                case SessionEvents.revoked:
                    let revoked = try event.decodePayload(SessionRevoked.self)
                    verifier.withRevocations { $0.revoke(revoked) }
                case TermsEvents.declined:
                    let declined = try event.decodePayload(TermsDeclined.self)
                    verifier.withRevocations { $0.declined(declined) }
                case AccountsEvents.deleted:
                    let deleted = try event.decodePayload(AccountDeleted.self)
                    verifier.withRevocations { $0.revoke(UserSessionsRevoked(userId: deleted.userId, revokedAt: deleted.deletedAt)) }
                default: break
                }
                verifier.withRevocations { $0.advance(to: number) }
            }
        }
        return true
    }
}
