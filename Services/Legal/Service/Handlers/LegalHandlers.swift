import Bus
import Contracts
import Foundation
import ServiceKit

/// The `legal.*` methods on the service's RPC server. Reads are open to any admitted caller (the
/// texts are public: the app shows them before sign-in); publishing is for operators only.
public struct LegalHandlers: Sendable {
    let store: LegalStore
    let outbox: Outbox

    public init(store: LegalStore, outbox: Outbox) {
        self.store = store
        self.outbox = outbox
    }

    public func register(on server: RPCServer) {
        let store = self.store
        let outbox = self.outbox
        server.register(LegalCurrent.self) { request, _ in
            guard let found = try await store.current(request.type, at: request.at) else {
                let when = request.at.map { " at \(Timestamp.format($0))" } ?? ""
                throw BusError(.notFound, "no version of \(request.type.rawValue) is in effect\(when)")
            }
            return Self.document(found)
        }
        server.register(LegalVersion.self) { request, _ in
            try LegalVersionRule.check(request.version)
            guard let found = try await store.version(request.type, request.version) else {
                throw BusError(.notFound, "\(request.type.rawValue) has no version \(request.version)")
            }
            return Self.document(found)
        }
        server.register(LegalHistory.self) { request, _ in
            LegalHistory.Reply(versions: try await store.history(request.type))
        }
        server.register(LegalAllVersions.self) { _, _ in
            LegalAllVersions.Reply(versions: try await store.allVersions())
        }
        server.register(LegalPublish.self) { request, context in
            try await Self.publish(request, context: context, store: store, outbox: outbox)
        }
    }

    /// `legal.publish`: who may, then what, then the write (see ``LegalStore/publish(_:by:outbox:)``).
    static func publish(
        _ request: LegalPublish.Request, context: BusRequestContext, store: LegalStore, outbox: Outbox
    ) async throws -> LegalVersionSummary {
        guard context.principal.kind == .operator else {
            throw BusError(.forbidden, "publishing legal documents is for operators; the caller is \(context.principal)")
        }
        try LegalVersionRule.check(request.version)
        try PublishValidation.checkContent(request.content)
        let draft = VersionDraft(
            type: request.type, version: request.version, content: request.content, lastUpdated: request.lastUpdated,
            effectiveAt: request.effectiveAt, material: request.material)
        let outcome = try await store.publish(draft, by: context.principal.description, outbox: outbox)
        context.logger.notice(
            outcome.created ? "published legal version" : "publish repeated an existing version",
            metadata: [
                "type": "\(request.type.rawValue)", "version": "\(request.version)", "digest": "\(outcome.summary.digest)",
                "material": "\(request.material)", "effective_at": "\(Timestamp.format(outcome.summary.effectiveAt))",
                "by": "\(context.principal)",
            ])
        return outcome.summary
    }

    /// A stored version as callers get it: with its outline.
    static func document(_ version: StoredVersion) -> LegalDocument {
        LegalDocument(summary: version.summary, content: version.content, outline: Outline.entries(of: version.content))
    }
}
