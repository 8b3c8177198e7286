import Bus
import Contracts
import Foundation
import ServiceKit

/// The `accounts.*` methods on the service's RPC server, and who may call them: a `user`
/// principal acts only for itself (``BusRequestContext/authorize(actingFor:)``); `accounts.get_or_create` runs before a session exists, so it
/// is for the gateway (service or anonymous principal) and operators; the terms standing is for
/// the gateway and operators; the restricted-users list is for operators.
struct AccountsHandlers: Sendable {
    let store: AccountsStore
    let rules: EligibilityRules
    let peers: Peers
    /// Where declines announce the sessions they end.
    let outbox: Outbox
    /// The consent stream's backpressure, receipt wait and wake-up of Audit's long poll.
    let backlog: ConsentBacklog
    let chained: ChainWait
    let signal: ConsentSignal

    func register(on server: RPCServer) {
        let signUp = SignUp(store: store, rules: rules, peers: peers, signal: signal, chained: chained)
        let terms = TermsActions(store: store, peers: peers, outbox: outbox, backlog: backlog, chained: chained, signal: signal)
        let view = UserView(peers: peers)
        server.register(AccountsGetOrCreate.self) { request, context in
            guard context.principal.kind != .user else {
                throw BusError(.forbidden, "get_or_create is called by the gateway after verifying the Apple identity, not by a signed-in user")
            }
            try context.requireUserAccess()
            return try await signUp.getOrCreate(request)
        }
        server.register(AccountsGet.self) { request, context in
            try context.authorize(actingFor: request.userId)
            guard let user = try await store.user(id: request.userId) else { throw try await store.missing(request.userId) }
            return try await view.present(user)
        }
        server.register(AccountsAcceptTerms.self) { request, context in
            try context.authorize(actingFor: request.userId)
            return try await terms.act(.accept, request, key: context.idempotencyKey)
        }
        let batch = TermsBatch(store: store, peers: peers, backlog: backlog, signal: signal)
        server.register(AccountsAcceptTermsBatch.self) { request, context in
            guard context.principal.kind == .service || context.principal.kind == .operator else {
                throw BusError(.forbidden, "accept_terms_batch is for the gateway; a user calls accept_terms")
            }
            try context.requireUserAccess()
            guard (1...AccountsAcceptTermsBatch.maximumItems).contains(request.items.count) else {
                throw BusError(.invalidArgument, "a batch carries 1 to \(AccountsAcceptTermsBatch.maximumItems) items")
            }
            return .init(outcomes: await batch.accept(request.items, logger: context.logger))
        }
        server.register(AccountsDeclineTerms.self) { request, context in
            try context.authorize(actingFor: request.userId)
            return try await terms.act(.decline, request, key: context.idempotencyKey)
        }
        ProfileHandlers(store: store, rules: rules, peers: peers).register(on: server)
        server.register(AccountsFindUsers.self) { request, context in
            guard context.principal.kind == .operator else { throw BusError(.forbidden, "finding users is for operators") }
            return try await Self.find(request, store: store, view: view)
        }
        server.register(AccountsTermsStanding.self) { request, context in
            guard context.principal.kind == .service || context.principal.kind == .operator else {
                throw BusError(.forbidden, "terms_standing is for the gateway and operators; a user reads accounts.get")
            }
            guard let standing = try await store.termsStanding(request.userId) else { throw Self.unknown(request.userId) }
            return .init(userId: request.userId, acceptedVersion: standing.acceptedVersion, sequence: standing.sequence)
        }
        server.register(AccountsRestrictedUsers.self) { request, context in
            guard context.principal.kind == .operator else { throw BusError(.forbidden, "the restricted-users list is for operators") }
            try PageLimit.restrictedUsers.validate(request.limit)
            let users = try await store.users(inStates: rules.restrictedStates, after: request.after, limit: request.limit)
            return AccountsRestrictedUsers.Reply(
                rulesVersion: rules.version, restrictedStates: rules.restrictedStates,
                users: users.map {
                    RestrictedUser(
                        id: $0.id, state: $0.state, eligibilityRulesVersion: $0.eligibilityRulesVersion,
                        eligibilityConfirmedAt: $0.eligibilityConfirmedAt)
                })
        }
    }

    /// `accounts.find_users`: by exactly one of id, Apple subject or email; each user as `accounts.get` shows it.
    static func find(_ request: AccountsFindUsers.Request, store: AccountsStore, view: UserView) async throws -> AccountsFindUsers.Reply {
        let given = [request.userId != nil, request.appleId != nil, request.email != nil].filter { $0 }.count
        guard given == 1 else { throw BusError(.invalidArgument, "give exactly one of userId, appleId or email") }
        try PageLimit.findUsers.validate(request.limit)
        let found = try await store.find(userId: request.userId, appleId: request.appleId, email: request.email, limit: request.limit)
        var users: [AccountUser] = []
        for user in found { users.append(try await view.present(user)) }
        return .init(users: users)
    }

    static func unknown(_ id: UUID) -> BusError { BusError(.notFound, "no user \(id.uuidString.lowercased())") }
}
