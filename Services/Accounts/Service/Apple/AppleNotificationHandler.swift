import Bus
import Contracts
import Crypto
import Foundation
import Hex
import Identity
import ServiceKit

/// `accounts.apple_notification`: Sign in with Apple server-to-server notifications, verified
/// against Apple's keys and applied once (see ``AccountsStore/apply(_:key:certifier:outbox:)``).
///
/// **Once.** Apple may deliver a notification more than once, and may sign the same event
/// twice; the key recorded is SHA-256 of (type, Apple id, event time), so either repeat is a
/// `duplicate`. The key is a digest: the table holds no Apple id.
struct AppleNotificationHandler: Sendable {
    let store: AccountsStore
    let verifier: AppleNotificationVerifier
    let certifier: DeletionCertifier
    let outbox: Outbox
    let deletion: DeletionHandlers

    func register(on server: RPCServer) {
        server.register(AccountsAppleNotification.self) { request, context in
            try SessionHandlers.gatewayOnly(context, "apple_notification")
            let notification: AppleServerNotification
            do {
                notification = try await verifier.verify(request.payload)
            } catch let error as IdentityError {
                context.logger.warning("apple notification refused", metadata: ["reason": "\(error)"])
                switch error {
                case .malformed, .tokenTooLarge: throw BusError(.invalidArgument, "the notification payload is malformed")
                default: throw SessionHandlers.refusal(error)
                }
            }
            let applied = try await store.apply(notification, key: Self.key(notification), certifier: certifier, outbox: outbox)
            context.logger.notice("apple notification", metadata: ["type": "\(notification.type)", "outcome": "\(applied.outcome)"])
            if let user = applied.deletedUser { await deletion.afterDeletion(user, logger: context.logger) }
            return .init(outcome: applied.outcome, eventType: notification.type, certificateId: applied.deletion?.certificate?.certificateId)
        }
    }

    static func key(_ notification: AppleServerNotification) -> String {
        let milliseconds = Int64((notification.eventTime.timeIntervalSince1970 * 1000).rounded())
        let text = "\(notification.type)\n\(notification.subject)\n\(milliseconds)"
        return Hex.string(SHA256.hash(data: Data(text.utf8)))
    }
}
