import Bus
import Contracts
import Foundation

/// The share link methods: create, list and revoke for the owner; open for anyone holding a token.
struct ShareHandlers: Sendable {
    let store: DocumentsStore
    let settings: DocumentsSettings
    /// Largest download limit a link may have.
    static let maximumUses = 1_000_000

    func register(on server: RPCServer) {
        let (store, settings) = (self.store, self.settings)
        server.register(DocumentsShareCreate.self) { request, context in
            let access = Access(try context.actingFor)
            let longest = Int(settings.shareMaxLifetime.inSeconds)
            guard (1...longest).contains(request.expiresInSeconds) else {
                throw BusError(.invalidArgument, "expiresInSeconds must be 1 to \(longest)")
            }
            if let uses = request.maxUses, !(1...Self.maximumUses).contains(uses) {
                throw BusError(.invalidArgument, "maxUses must be 1 to \(Self.maximumUses)")
            }
            let (link, token) = try await store.createLink(
                documentId: request.documentId, access: access, expiresInSeconds: request.expiresInSeconds, maxUses: request.maxUses)
            context.logger.info("share link created", metadata: ["document": "\(request.documentId)", "link": "\(link.id)"])
            return DocumentsShareCreate.Reply(link: link, token: token)
        }
        server.register(DocumentsShareList.self) { request, context in
            DocumentsShareList.Reply(links: try await store.links(of: request.documentId, access: Access(try context.actingFor)))
        }
        server.register(DocumentsShareRevoke.self) { request, context in
            let link = try await store.revoke(linkId: request.linkId, access: Access(try context.actingFor))
            context.logger.info("share link revoked", metadata: ["link": "\(link.id)"])
            return link
        }
        server.register(DocumentsShareOpen.self) { request, _ in
            guard !request.token.isEmpty, request.token.utf8.count <= 256 else { throw BusError(.invalidArgument, "token is malformed") }
            let (document, grant, expires) = try await store.open(
                token: request.token, clientIP: request.clientIP.map { String($0.prefix(64)) }, byteRange: request.byteRange ?? false,
                grantLifetimeSeconds: settings.shareGrantLifetime.inSeconds)
            return DocumentsShareOpen.Reply(document: document.contract, grant: grant, grantExpiresAt: expires)
        }
    }
}
