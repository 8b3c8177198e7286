import Bus
import Foundation

/// Who a request's `Authorization: Bearer` token says the caller is.
package enum Credential: Sendable, Equatable {
    /// A session token verified here (``SessionVerifier``) or, when the gateway could not judge
    /// it, by Accounts (`accounts.verify_session`). `userId` is nil while the Apple id has no
    /// account yet (sign-in before eligibility).
    case session(userId: UUID?, appleId: String, sessionId: UUID)
    /// An Apple identity token verified here (signature, issuer, audience, expiry).
    case apple(appleId: String)
    /// A key a route module's ``TokenKind`` verified (the Supabase module's `anon` key): it names
    /// no one, so it reads only what anyone may read.
    case apiKey

    var appleId: String? {
        switch self {
        case .session(_, let appleId, _), .apple(let appleId): appleId
        case .apiKey: nil
        }
    }

    /// The account the credential speaks for, when it names one.
    var userId: UUID? {
        if case .session(let userId, _, _) = self { return userId }
        return nil
    }

    /// The bus principal for acting as this caller on `user`'s behalf.
    package static func principal(for user: UUID) -> Principal { .user(user.uuidString.lowercased()) }
}
