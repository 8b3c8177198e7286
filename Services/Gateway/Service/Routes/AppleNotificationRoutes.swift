import Bus
import Contracts
import Foundation
import Hummingbird

/// Apple's server-to-server notifications for Sign in with Apple (`email-disabled`,
/// `email-enabled`, `consent-revoked`, `account-delete`): Apple POSTs `{"payload": "<signed JWT>"}`
/// to the endpoint registered for the app. The payload is the credential: Accounts verifies its
/// signature against Apple's keys and applies it once (a repeat changes nothing), so the route is
/// public. A 200 tells Apple to stop retrying; a bad signature is 401 and changes nothing.
package struct AppleNotificationRoutes {
    let services: ServiceClients
    let maxBodyBytes: Int

    struct Body: Decodable { let payload: String }

    func register(on family: RouteFamily) {
        family.add(.post, "/api/apple/notifications", "Apple's server-to-server notification (a signed JWT), applied once.", public: true) {
            request, context in
            let body = try await JSONBodies.decode(Body.self, from: request, limit: maxBodyBytes)
            let reply = try await services.call(
                .accounts, AccountsAppleNotification.self, .init(payload: body.payload), principal: .service("gateway"), context: context)
            return try JSONBodies.response(reply)
        }
    }
}
