import BusCore
import Foundation

/// `accounts.find_users` (operators only): the users that match exactly one of a user id, an
/// Apple subject or an email address (compared without regard to case; several users may share
/// one). At most `limit` users, oldest first. `invalid_argument` unless exactly one criterion is
/// given. For `compass users`, to look people up and remove test users.
public enum AccountsFindUsers: RPCMethod {
    public struct Request: Codable, Sendable, Equatable {
        public var userId: UUID?
        public var appleId: String?
        public var email: String?
        public var limit: Int
        public init(userId: UUID? = nil, appleId: String? = nil, email: String? = nil, limit: Int = 50) {
            self.userId = userId
            self.appleId = appleId
            self.email = email
            self.limit = limit
        }
    }
    public struct Reply: Codable, Sendable, Equatable {
        public var users: [AccountUser]
        public init(users: [AccountUser]) { self.users = users }
    }
    public static let type = "accounts.find_users"
    public static let isIdempotent = true
    /// A read.
    public static let cachesReply = false
}
