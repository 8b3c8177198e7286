import Bus
import Foundation

/// Who may do what, the way the other services decide it: a signed-in user acts on their own
/// documents only (another user's document is `not_found`, never revealing it exists); services
/// on the allow-list (the gateway, Accounts: `BUS_SERVICES_ACTING_FOR_USERS`) and operators act for
/// anyone, any other service is `forbidden`; anonymous callers are `unauthenticated`
/// (except `documents.share_open`, which the token itself authorises).
enum Authorization {
    /// The ``Access`` of the caller for by-id operations.
    static func access(_ context: BusRequestContext) throws -> Access {
        switch context.principal.kind {
        case .user:
            guard let id = UUID(uuidString: context.principal.id) else {
                throw BusError(.unauthenticated, "the user principal is not a user id")
            }
            return .owner(id)
        case .service:
            try context.requireUserAccess()
            return .any
        case .operator: return .any
        case .anonymous: throw BusError(.unauthenticated, "documents need a signed-in principal")
        }
    }

    /// Checks that the caller may act for `owner` (create, list, usage): `forbidden` for another user.
    static func authorize(_ context: BusRequestContext, for owner: UUID) throws {
        if case .owner(let id) = try access(context), id != owner {
            throw BusError(.forbidden, "a user may only see or change their own documents")
        }
    }
}
