import Bus
import Contracts
import Foundation
import Logging
import ServiceLifecycle

/// Keeps a ``TermsCatalog`` up to date: every `legal.published` event is added as it arrives, and
/// the whole list is reloaded from Legal every `interval`, which covers events pub/sub lost (Accounts
/// down or not yet connected when Legal published). The catalog is memory only, so every instance
/// follows the events itself (no shared cursor).
struct TermsCatalogFollower: Service {
    let catalog: TermsCatalog
    let events: EventSubscriber
    let interval: Duration
    let logger: Logger

    func run() async throws {
        let live = Task { [catalog, events, logger] in
            for await event in events where event.envelope.type == LegalEvents.published {
                do {
                    catalog.remember(try event.envelope.decodePayload(LegalVersionSummary.self))
                } catch {
                    logger.warning("legal.published event not understood", metadata: ["error": "\(error)"])
                }
            }
        }
        defer { live.cancel() }
        while !Task.isShuttingDownGracefully && !Task.isCancelled {
            do {
                try await catalog.reload()
            } catch {
                logger.debug("terms versions not reloaded; next try later", metadata: ["error": "\(error)"])
            }
            try? await cancelWhenGracefulShutdown { try await Task.sleep(for: self.interval) }
        }
        await events.close()
    }
}
