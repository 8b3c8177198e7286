import Foundation
import HTTPTypes
import Hummingbird

/// The refusal of a route that needs the terms in effect accepted (``TermsGate``): `403` with the
/// stable code `terms_not_accepted` and the version to accept, in the error body of the route's
/// family (its ``ErrorRenderer``), and that version in
/// `X-Compass-Terms-Version` on every family.
///
/// Like `rate_limited`, the code is the gateway's own refusal, outside the bus's closed set.
package struct TermsNotAccepted: Error, Sendable, Equatable {
    /// The terms version in effect, the one to accept.
    package let currentVersion: String

    package static let code = "terms_not_accepted"
    static let versionHeader = HTTPField.Name("X-Compass-Terms-Version")!

    package var message: String {
        "accept the terms of service in effect (version \(currentVersion)) to use this: read them at GET /api/terms, accept with "
            + "POST /api/me/consents/terms_of_service/accept"
    }
}
