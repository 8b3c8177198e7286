import Bus
import Contracts
import Foundation
import TestSupport
import Testing

extension DocumentsSuites {
    @Suite("Documents: share links")
    struct ShareTests {
        @Test("a link opens the document for anyone with the token, logs each use, and stops at its download limit", arguments: Storage.allCases)
        func limitAndLog(storage: Storage) async throws {
            try await DocumentsHarness.run(storage: storage) { harness in
                let owner = UUID()
                let me = DocumentsHarness.user(owner)
                let bytes = Samples.pdf + Samples.bytes(2000, seed: 9) + Data("%%EOF".utf8)
                let document = try await harness.store(owner: owner, bytes)
                let created = try await harness.client.call(
                    DocumentsShareCreate.self, .init(documentId: document.id, expiresInSeconds: 3600, maxUses: 2), principal: me)
                #expect(created.token.count == 43 && created.link.maxUses == 2 && created.link.uses == 0)
                for ip in ["203.0.113.1", "198.51.100.7"] {
                    let opened = try await harness.client.call(
                        DocumentsShareOpen.self, .init(token: created.token, clientIP: ip), principal: .anonymous)
                    #expect(opened.document.id == document.id)
                    // The grant reads the bytes without the owner's principal.
                    let (_, read) = try await harness.read(document.id, principal: .anonymous, offset: 0, length: 1 << 20, grant: opened.grant)
                    #expect(read == bytes)
                }
                let exhausted = await #expect(throws: BusError.self) {
                    try await harness.client.call(DocumentsShareOpen.self, .init(token: created.token, clientIP: "192.0.2.1"), principal: .anonymous)
                }
                #expect(exhausted?.code == .gone)
                let links = try await harness.client.call(DocumentsShareList.self, .init(documentId: document.id), principal: me).links
                #expect(links.count == 1 && links[0].uses == 2)
                #expect(links[0].useLog.map(\.clientIP) == ["203.0.113.1", "198.51.100.7"])
                let unknown = await #expect(throws: BusError.self) {
                    try await harness.client.call(DocumentsShareOpen.self, .init(token: "no-such-token", clientIP: nil), principal: .anonymous)
                }
                #expect(unknown?.code == .notFound)
                // Without a grant, an anonymous read is refused.
                let anonymous = await #expect(throws: BusError.self) {
                    try await harness.read(document.id, principal: .anonymous, offset: 0, length: 10)
                }
                #expect(anonymous?.code == .unauthenticated)
            }
        }

        @Test("an expired link is gone; a grant outlives its opening only for the grant lifetime", arguments: Storage.allCases)
        func expiry(storage: Storage) async throws {
            try await DocumentsHarness.run(storage: storage) { harness in
                let owner = UUID()
                let me = DocumentsHarness.user(owner)
                let document = try await harness.store(owner: owner, Samples.pdf)
                let link = try await harness.client.call(
                    DocumentsShareCreate.self, .init(documentId: document.id, expiresInSeconds: 1), principal: me)
                let opened = try await harness.client.call(DocumentsShareOpen.self, .init(token: link.token, clientIP: nil), principal: .anonymous)
                try await Task.sleep(for: .milliseconds(2100))
                let expired = await #expect(throws: BusError.self) {
                    try await harness.client.call(DocumentsShareOpen.self, .init(token: link.token, clientIP: nil), principal: .anonymous)
                }
                #expect(expired?.code == .gone)
                // The harness's grant lifetime is 2 s: this grant is spent too.
                let spent = await #expect(throws: BusError.self) {
                    try await harness.read(document.id, principal: .anonymous, offset: 0, length: 10, grant: opened.grant)
                }
                #expect(spent?.code == .gone)
                let tooLong = await #expect(throws: BusError.self) {
                    try await harness.client.call(
                        DocumentsShareCreate.self, .init(documentId: document.id, expiresInSeconds: 365 * 86_400), principal: me)
                }
                #expect(tooLong?.code == .invalidArgument)
            }
        }

        @Test("a revoked link is gone at once, its grants too; links die with their document", arguments: Storage.allCases)
        func revokeAndDelete(storage: Storage) async throws {
            try await DocumentsHarness.run(storage: storage) { harness in
                let owner = UUID()
                let me = DocumentsHarness.user(owner)
                let document = try await harness.store(owner: owner, Samples.pdf)
                let link = try await harness.client.call(
                    DocumentsShareCreate.self, .init(documentId: document.id, expiresInSeconds: 600), principal: me)
                let opened = try await harness.client.call(
                    DocumentsShareOpen.self, .init(token: link.token, clientIP: "203.0.113.5"), principal: .anonymous)
                let revoked = try await harness.client.call(DocumentsShareRevoke.self, .init(linkId: link.link.id), principal: me)
                #expect(revoked.revokedAt != nil)
                let again = try await harness.client.call(DocumentsShareRevoke.self, .init(linkId: link.link.id), principal: me)
                #expect(again.revokedAt == revoked.revokedAt)
                let gone = await #expect(throws: BusError.self) {
                    try await harness.client.call(DocumentsShareOpen.self, .init(token: link.token, clientIP: nil), principal: .anonymous)
                }
                #expect(gone?.code == .gone)
                let grant = await #expect(throws: BusError.self) {
                    try await harness.read(document.id, principal: .anonymous, offset: 0, length: 10, grant: opened.grant)
                }
                #expect(grant?.code == .gone)

                let second = try await harness.client.call(
                    DocumentsShareCreate.self, .init(documentId: document.id, expiresInSeconds: 600), principal: me)
                let deleted = try await harness.client.call(DocumentsDelete.self, .init(id: document.id), principal: me)
                #expect(deleted.shareLinksDeleted == 2)
                let dead = await #expect(throws: BusError.self) {
                    try await harness.client.call(DocumentsShareOpen.self, .init(token: second.token, clientIP: nil), principal: .anonymous)
                }
                #expect(dead?.code == .notFound)
                let rows = try await harness.database.pool.withConnection { db in
                    try db.query("SELECT (SELECT count(*) FROM documents.share_links) + (SELECT count(*) FROM documents.share_link_uses)")[0]
                        .decode(Int.self, column: 0)
                }
                #expect(rows == 0)
            }
        }
    }
}
