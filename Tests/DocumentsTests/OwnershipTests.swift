import Bus
import Contracts
import Foundation
import TestSupport
import Testing

extension DocumentsSuites {
    @Suite("Documents: ownership, deletion and usage")
    struct OwnershipTests {
        @Test("another user's document is not_found for every operation; their collections are forbidden")
        func isolation() async throws {
            try await DocumentsHarness.run { harness in
                let (alice, bob) = (UUID(), UUID())
                let document = try await harness.store(owner: alice, Samples.pdf)
                let pending = try await harness.create(owner: alice, length: 100)
                let asBob = DocumentsHarness.user(bob)
                let client = harness.client
                let calls: [(String, @Sendable () async throws -> Void)] = [
                    ("get", { _ = try await client.call(DocumentsGet.self, .init(id: document.id), principal: asBob) }),
                    ("get by url", { _ = try await client.call(DocumentsGet.self, .init(fileUrl: document.fileUrl), principal: asBob) }),
                    ("read", { _ = try await harness.read(document.id, principal: asBob, offset: 0, length: 10) }),
                    ("append", { _ = try await harness.append(pending.id, owner: bob, offset: 0, Samples.pdf) }),
                    ("status", { _ = try await client.call(DocumentsUploadStatus.self, .init(id: pending.id), principal: asBob) }),
                    ("delete", { _ = try await client.call(DocumentsDelete.self, .init(id: document.id), principal: asBob) }),
                    (
                        "share",
                        {
                            _ = try await client.call(
                                DocumentsShareCreate.self, .init(documentId: document.id, expiresInSeconds: 60), principal: asBob)
                        }
                    ),
                    ("links", { _ = try await client.call(DocumentsShareList.self, .init(documentId: document.id), principal: asBob) }),
                ]
                for (name, call) in calls {
                    let error = await #expect(throws: BusError.self, "\(name)") { try await call() }
                    #expect(error?.code == .notFound, "\(name)")
                }
                let refusals: [(String, @Sendable () async throws -> Void)] = [
                    ("list", { _ = try await client.call(DocumentsList.self, .init(filter: .init(ownerId: alice)), principal: asBob) }),
                    (
                        "create",
                        {
                            _ = try await harness.client.call(
                                DocumentsCreate.self, .init(ownerId: alice, type: .resume, title: "x", fileType: nil, length: 1), principal: asBob)
                        }
                    ),
                    ("usage", { _ = try await client.call(DocumentsUsage.self, .init(userId: alice), principal: asBob) }),
                ]
                for (name, call) in refusals {
                    let error = await #expect(throws: BusError.self, "\(name)") { try await call() }
                    #expect(error?.code == .forbidden, "\(name)")
                }
                let anonymous = await #expect(throws: BusError.self) {
                    try await client.call(DocumentsGet.self, .init(id: document.id), principal: .anonymous)
                }
                #expect(anonymous?.code == .unauthenticated)
                // Alice's document is untouched, and a service (the gateway) may act for anyone.
                #expect(try await client.call(DocumentsGet.self, .init(id: document.id), principal: .service("gateway")) == document)
                #expect(try await harness.get(.init(id: document.id), as: alice) == document)
            }
        }

        @Test("deleting a document removes its row, links and large object; bytes gone under the metadata read as gone")
        func deletionAndMissingBytes() async throws {
            try await DocumentsHarness.run { harness in
                let owner = UUID()
                let me = DocumentsHarness.user(owner)
                let document = try await harness.store(owner: owner, Samples.pdf)
                _ = try await harness.client.call(DocumentsShareCreate.self, .init(documentId: document.id, expiresInSeconds: 60), principal: me)
                let objects = try await harness.largeObjects()
                let deleted = try await harness.client.call(DocumentsDelete.self, .init(id: document.id), principal: me)
                #expect(deleted.shareLinksDeleted == 1)
                #expect(try await harness.largeObjects() == objects - 1)
                let after = await #expect(throws: BusError.self) { try await harness.get(.init(id: document.id), as: owner) }
                #expect(after?.code == .notFound)
                let twice = await #expect(throws: BusError.self) {
                    try await harness.client.call(DocumentsDelete.self, .init(id: document.id), principal: me)
                }
                #expect(twice?.code == .notFound)

                let orphan = try await harness.store(owner: owner, Samples.pdf)
                try await harness.database.pool.withConnection { db in
                    try db.query("SELECT lo_unlink(lo_oid::oid) FROM documents.documents WHERE id = $1", orphan.id)
                }
                let gone = await #expect(throws: BusError.self) { try await harness.read(orphan.id, principal: me, offset: 0, length: 10) }
                #expect(gone?.code == .gone)
                #expect(try await harness.get(.init(id: orphan.id), as: owner).bytesState == .missing)
                let list = try await harness.client.call(DocumentsList.self, .init(filter: .init(ownerId: owner)), principal: me)
                #expect(list.documents.map(\.bytesState) == [.missing])
                let share = await #expect(throws: BusError.self) {
                    try await harness.client.call(DocumentsShareCreate.self, .init(documentId: orphan.id, expiresInSeconds: 60), principal: me)
                }
                #expect(share?.code == .gone)
                // Deleting it still works, though its bytes are already gone.
                _ = try await harness.client.call(DocumentsDelete.self, .init(id: orphan.id), principal: me)
            }
        }

        @Test("documents.usage counts documents, stored bytes and share links (usable or not)")
        func usage() async throws {
            try await DocumentsHarness.run { harness in
                let owner = UUID()
                let me = DocumentsHarness.user(owner)
                let empty = try await harness.client.call(DocumentsUsage.self, .init(userId: owner), principal: me)
                #expect(empty == .init(userId: owner, documents: 0, bytes: 0, activeShareLinks: 0, shareLinks: 0))
                let a = try await harness.store(owner: owner, Samples.pdf)
                let b = try await harness.store(owner: owner, Samples.png, type: .statsSheet, fileType: "image/png")
                let pending = try await harness.create(owner: owner, fileType: nil, length: 1000)
                _ = try await harness.append(pending.id, owner: owner, offset: 0, Samples.bytes(300, seed: 1))
                _ = try await harness.client.call(DocumentsShareCreate.self, .init(documentId: a.id, expiresInSeconds: 600), principal: me)
                let revoked = try await harness.client.call(DocumentsShareCreate.self, .init(documentId: b.id, expiresInSeconds: 600), principal: me)
                _ = try await harness.client.call(DocumentsShareRevoke.self, .init(linkId: revoked.link.id), principal: me)
                _ = try await harness.store(owner: UUID(), Samples.pdf)
                let usage = try await harness.client.call(DocumentsUsage.self, .init(userId: owner), principal: .service("accounts"))
                #expect(
                    usage
                        == .init(
                            userId: owner, documents: 3, bytes: Int64(Samples.pdf.count + Samples.png.count + 300), activeShareLinks: 1, shareLinks: 2
                        ))
            }
        }
    }
}

extension DocumentsHarness {
    /// Large objects in the database.
    func largeObjects() async throws -> Int {
        try await database.pool.withConnection { db in try db.query("SELECT count(*) FROM pg_largeobject_metadata")[0].decode(Int.self, column: 0) }
    }
}
