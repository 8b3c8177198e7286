import Bus
import Contracts
import Foundation
import Logging
import ServiceKit

/// Keeps a ``TermsCatalog`` up to date: every `legal.published` event is added as it arrives, and
/// the whole list is reloaded from Legal at start and every `tickInterval`, which covers events
/// pub/sub lost (Accounts down or not yet connected when Legal published). The catalog is memory
/// only, so every instance follows the events itself (no shared cursor), and a reload replaces
/// what any event said, so the order of events does not matter here.
struct TermsCatalogFollower: Follower {
    let catalog: TermsCatalog
    let events: EventSubscriber
    let tickInterval: Duration
    let logger: Logger

    func follow(_ input: FollowerInput, _: inout Void) async {
        switch input {
        case .event(let event):
            guard event.type == LegalEvents.published else { return }
            do {
                catalog.remember(try event.decodePayload(LegalVersionSummary.self))
            } catch {
                logger.warning("legal.published event not understood", metadata: ["error": "\(error)"])
            }
        case .tick:
            do {
                try await catalog.reload()
            } catch {
                logger.debug("terms versions not reloaded; next try later", metadata: ["error": "\(error)"])
            }
        }
    }
}
