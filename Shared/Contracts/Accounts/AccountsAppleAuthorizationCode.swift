import BusCore
import Foundation

/// `accounts.apple_authorization_code`: hands over the authorization code Apple gave the app at
/// sign-in, after the sign-in, for clients whose sign-in call cannot carry it (the Supabase SDKs'
/// `signInWithIdToken`). The code is exchanged at Apple for the Apple id of the open session
/// `sessionId` names, and the refresh token is stored sealed, as `accounts.sign_in_with_apple`
/// does with its `authorizationCode`, so that deleting the account revokes it.
///
/// Errors: `unauthenticated` when the session is unknown, signed out or expired;
/// `invalid_argument` when Apple refuses the code (expired, already used, or not this app's);
/// `unavailable` when Apple cannot be reached or its token endpoints are not configured
/// (`ACCOUNTS_APPLE_*`). For the gateway (after it verified the session) and operators, not
/// `user` principals.
public enum AccountsAppleAuthorizationCode: RPCMethod {
    public struct Request: Codable, Sendable, Equatable {
        public var sessionId: UUID
        public var authorizationCode: String
        public init(sessionId: UUID, authorizationCode: String) {
            self.sessionId = sessionId
            self.authorizationCode = authorizationCode
        }
    }
    public struct Reply: Codable, Sendable, Equatable {
        /// Always true in a reply: Apple's refresh token for the session's Apple id is stored.
        public var appleTokenStored: Bool
        public init(appleTokenStored: Bool) { self.appleTokenStored = appleTokenStored }
    }
    public static let type = "accounts.apple_authorization_code"
    public static let isIdempotent = false
    /// Not retried (a code is spent once), so nothing to keep.
    public static let cachesReply = false
}
