import Foundation
import Identity
import Logging
import Metrics
import ServiceKit
import ServiceLifecycle

/// Reseals the stored Apple refresh tokens with the current seal key after a rotation of
/// `ACCOUNTS_APPLE_TOKEN_KEYS`: put the new key first and keep the old one after it, restart, and
/// this sweep (at start, then every `interval`) opens each token sealed with an older key and seals
/// it again with the new one. Once it logs that none is left under an older key, the old key can
/// go; a token sealed with a key no longer listed cannot be opened, so it could not be revoked at
/// Apple when its account is deleted, and is reported as unreadable.
struct AppleTokenResealer: PeriodicSweep {
    let store: AccountsStore
    let box: SecretBox
    let interval: Duration
    let logger: Logger
    static let resealed = Counter(label: "accounts_apple_tokens_resealed_total")
    static let page = 200
    /// The keys are read at start, so the first sweep does a rotation's work; later ones reseal
    /// what instances still on the old keys stored during a rolling restart.
    static let defaultInterval: Duration = .seconds(600)

    func sweep() async {
        var resealed = 0
        var unreadable = 0
        var after = UUID(uuidString: "00000000-0000-0000-0000-000000000000")!
        do {
            while true {
                let tokens = try await store.tokensSealed(withKeyOtherThan: box.keys.currentID, after: after, limit: Self.page)
                for token in tokens where box.needsResealing(token.sealed) {
                    let context = token.id.uuidString.lowercased()
                    guard let plaintext = try? box.open(token.sealed, context: context) else {
                        unreadable += 1
                        continue
                    }
                    if try await store.reseal(token.id, from: token.sealed, to: try box.seal(plaintext, context: context)) {
                        resealed += 1
                        Self.resealed.increment()
                    }
                }
                guard let last = tokens.last, tokens.count == Self.page else { break }
                after = last.id
            }
        } catch {
            logger.warning("could not reseal the stored apple tokens; will try again", metadata: ["error": "\(error)"])
            return
        }
        if resealed > 0 {
            logger.notice(
                "apple tokens resealed with the current key", metadata: ["resealed": "\(resealed)", "key": "\(box.keys.currentID)"])
        }
        if unreadable > 0 {
            logger.warning(
                "apple tokens sealed with a key no longer in ACCOUNTS_APPLE_TOKEN_KEYS: they cannot be revoked at Apple",
                metadata: ["unreadable": "\(unreadable)"])
        } else if resealed > 0 {
            logger.notice("no apple token is left under an older seal key: older keys can be removed from ACCOUNTS_APPLE_TOKEN_KEYS")
        }
    }
}
