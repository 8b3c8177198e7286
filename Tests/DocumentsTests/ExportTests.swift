import Bus
import Contracts
import Foundation
import TestSupport
import Testing

extension DocumentsSuites {
    @Suite("Documents: the data export's listing")
    struct ExportTests {
        @Test("every document of the owner in any state, keyset pages, links with their use logs; another user is refused")
        func exportListsEverythingOfTheOwnerOnly() async throws {
            try await DocumentsHarness.run { harness in
                let owner = UUID()
                let me = DocumentsHarness.user(owner)
                var made: [Document] = []
                for index in 0..<4 { made.append(try await harness.store(owner: owner, Samples.pdf, title: "Doc \(index)")) }
                let unfinished = try await harness.create(owner: owner, length: 100)
                let stranger = try await harness.store(owner: UUID(), Samples.pdf)
                let link = try await harness.client.call(
                    DocumentsShareCreate.self, .init(documentId: made[1].id, expiresInSeconds: 600), principal: me)
                _ = try await harness.client.call(DocumentsShareOpen.self, .init(token: link.token, clientIP: "192.0.2.7"), principal: .anonymous)
                _ = try await harness.client.call(
                    DocumentsShareCreate.self, .init(documentId: made[3].id, expiresInSeconds: 600, maxUses: 2), principal: me)

                // Pages of 2, newest first: the unfinished upload too (collections leave it out).
                var ids: [UUID] = []
                var links: [ShareLink] = []
                var after: String?
                var pages = 0
                repeat {
                    let page = try await harness.client.call(DocumentsExport.self, .init(ownerId: owner, limit: 2, after: after), principal: me)
                    #expect(page.documents.count <= 2)
                    // A page's links belong to that page's documents.
                    #expect(page.shareLinks.allSatisfy { link in page.documents.contains { $0.id == link.documentId } })
                    ids += page.documents.map(\.id)
                    links += page.shareLinks
                    after = page.nextCursor
                    pages += 1
                } while after != nil
                #expect(pages == 3)
                #expect(ids == [unfinished.id] + made.reversed().map(\.id))
                #expect(!ids.contains(stranger.id))
                #expect(links.count == 2)
                let used = try #require(links.first { $0.documentId == made[1].id })
                #expect(used.uses == 1 && used.useLog.map(\.clientIP) == ["192.0.2.7"])

                let other = await #expect(throws: BusError.self) {
                    try await harness.client.call(DocumentsExport.self, .init(ownerId: owner), principal: DocumentsHarness.user(UUID()))
                }
                #expect(other?.code == .forbidden)
                for bad in [
                    DocumentsExport.Request(ownerId: owner, limit: 0), .init(ownerId: owner, limit: 201), .init(ownerId: owner, after: "nope"),
                ] {
                    let error = await #expect(throws: BusError.self) { try await harness.client.call(DocumentsExport.self, bad, principal: me) }
                    #expect(error?.code == .invalidArgument)
                }
            }
        }
    }
}
