import Foundation

/// Whom a request may act for, by the one rule every service applies (``BusRequestContext/actingFor``).
public enum ActingFor: Sendable, Hashable {
    /// A signed-in user: itself only.
    case user(UUID)
    /// An operator, or a service allowed to act for users: any user.
    case anyone
}

/// The rule "a user acts for itself; operators and the allowed services act for anyone", in one
/// place: services call ``authorize(actingFor:)`` where a request names its user, and read
/// ``actingFor`` where a by-id request must be scoped to the caller's own rows.
extension BusRequestContext {
    /// Whom this request acts for: a `user` principal for its own id, an operator or a service on
    /// the allow-list (``RPCServerOptions/servicesActingForUsers``) for anyone.
    /// Throws `unauthenticated` when the principal names no one (anonymous, an empty id, or a user
    /// id that is not a UUID) and `forbidden` for a service not allowed to act for users.
    public var actingFor: ActingFor {
        get throws {
            guard principal.kind != .anonymous, !principal.id.isEmpty else { throw Self.noPrincipal }
            switch principal.kind {
            case .user:
                guard let id = MessageID.parse(principal.id) else {
                    throw BusError(.unauthenticated, "the user principal is not a user id (a UUID)")
                }
                return .user(id)
            case .service:
                try requireUserAccess()
                return .anyone
            case .operator: return .anyone
            case .anonymous: throw Self.noPrincipal
            }
        }
    }

    private static var noPrincipal: BusError {
        BusError(.unauthenticated, "acting for a user needs a principal (a user, a service or an operator); this request carries none")
    }

    /// Checks that this request may act for `user`: ``actingFor``'s refusals, and `forbidden` for
    /// another user's principal.
    public func authorize(actingFor user: UUID) throws {
        if case .user(let id) = try actingFor, id != user {
            throw BusError(.forbidden, "a user may act only for themselves")
        }
    }

    /// A `service:` principal that may not act for users: an admitted peer that is neither an
    /// asserter nor on the server's allow-list (e.g. Legal calling Documents). Handlers that let
    /// services act for any user refuse it, so one compromised service key does not open every
    /// user's records.
    public var isServiceWithoutUserAccess: Bool {
        principal.kind == .service && !(servicesActingForUsers?.contains(principal.id) ?? true)
    }

    /// `forbidden` for ``isServiceWithoutUserAccess``; for methods that only services and
    /// operators call (no user of their own), where ``actingFor`` does not apply.
    public func requireUserAccess() throws {
        guard !isServiceWithoutUserAccess else {
            throw BusError(.forbidden, "service \(principal.id) may not act for users")
        }
    }
}
