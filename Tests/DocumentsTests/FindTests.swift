import Bus
import Contracts
import Foundation
import TestSupport
import Testing

extension DocumentsSuites {
    @Suite("Documents: finding and collections")
    struct FindTests {
        @Test("by id, by file URL and by a seed 002 reference (with / a file URL, otherwise an id)")
        func findByIdAndFileURL() async throws {
            try await DocumentsHarness.run { harness in
                let owner = UUID()
                let document = try await harness.store(owner: owner, Samples.pdf)
                #expect(try await harness.get(.init(id: document.id), as: owner) == document)
                #expect(try await harness.get(.init(fileUrl: document.fileUrl), as: owner) == document)
                #expect(try await harness.get(.init(reference: document.fileUrl), as: owner) == document)
                #expect(try await harness.get(.init(reference: document.id.uuidString), as: owner) == document)
                #expect(
                    try await harness.get(.init(fileUrl: "https://files.example.com/storage/v1/object/" + document.fileUrl), as: owner) == document)
                let unknown = await #expect(throws: BusError.self) { try await harness.get(.init(id: UUID()), as: owner) }
                #expect(unknown?.code == .notFound)
                let unknownURL = await #expect(throws: BusError.self) {
                    try await harness.get(.init(reference: "documents/\(UUID().uuidString.lowercased())/transcript.pdf"), as: owner)
                }
                #expect(unknownURL?.code == .notFound)
                for invalid in ["not-a-url/", "https://host/elsewhere/x", "documents/not-an-id/x", "documents/\(document.id)/"] {
                    let error = await #expect(throws: BusError.self, "\(invalid)") { try await harness.get(.init(reference: invalid), as: owner) }
                    #expect(error?.code == .invalidArgument, "\(invalid)")
                }
                let neither = await #expect(throws: BusError.self) { try await harness.get(.init(reference: "hello"), as: owner) }
                #expect(neither?.code == .invalidArgument)
                let both = await #expect(throws: BusError.self) {
                    try await harness.get(.init(id: document.id, fileUrl: document.fileUrl), as: owner)
                }
                #expect(both?.code == .invalidArgument)
            }
        }

        @Test("collections keep a stable order with keyset pages; position, previous and next follow inserts in between")
        func collectionsAndPosition() async throws {
            try await DocumentsHarness.run { harness in
                let owner = UUID()
                let me = DocumentsHarness.user(owner)
                var made: [Document] = []
                for index in 0..<5 {
                    made.append(
                        try await harness.store(owner: owner, Samples.pdf, title: "Doc \(index)", schoolId: index % 2 == 0 ? "stanford" : "duke"))
                }
                // Someone else's documents and an unfinished upload never appear.
                _ = try await harness.store(owner: UUID(), Samples.pdf)
                _ = try await harness.create(owner: owner, length: 100)
                let all = CollectionFilter(ownerId: owner)
                let newestFirst = made.reversed().map(\.id)

                let first = try await harness.client.call(DocumentsList.self, .init(filter: all, limit: 2), principal: me)
                #expect(first.documents.map(\.id) == Array(newestFirst[0..<2]))
                #expect(first.total == 5)
                // A document added between pages is newer: it neither repeats nor shifts the next page.
                let late = try await harness.store(owner: owner, Samples.pdf, title: "Late")
                let second = try await harness.client.call(DocumentsList.self, .init(filter: all, limit: 2, after: first.nextCursor), principal: me)
                #expect(second.documents.map(\.id) == Array(newestFirst[2..<4]))
                #expect(second.total == 6)
                let third = try await harness.client.call(DocumentsList.self, .init(filter: all, limit: 2, after: second.nextCursor), principal: me)
                #expect(third.documents.map(\.id) == [newestFirst[4]])
                #expect(third.nextCursor == nil)

                let order = [late.id] + newestFirst
                for (index, id) in order.enumerated() {
                    let position = try await harness.client.call(DocumentsPosition.self, .init(id: id, filter: all), principal: me)
                    #expect(position.position == index + 1 && position.total == order.count)
                    #expect(position.previousId == (index > 0 ? order[index - 1] : nil))
                    #expect(position.nextId == (index + 1 < order.count ? order[index + 1] : nil))
                }
                // Filtered by school: Doc 4, Doc 2, Doc 0 (newest first).
                let stanford = CollectionFilter(ownerId: owner, schoolId: "stanford")
                let listed = try await harness.client.call(DocumentsList.self, .init(filter: stanford), principal: me)
                #expect(listed.documents.map(\.id) == [made[4].id, made[2].id, made[0].id])
                let middle = try await harness.client.call(DocumentsPosition.self, .init(id: made[2].id, filter: stanford), principal: me)
                #expect(middle == .init(id: made[2].id, position: 2, total: 3, previousId: made[4].id, nextId: made[0].id))
                // By type: only the transcript-typed ones; a document outside the filter is not_found there.
                let videos = CollectionFilter(ownerId: owner, type: .highlightVideo)
                #expect(try await harness.client.call(DocumentsList.self, .init(filter: videos), principal: me).total == 0)
                let outside = await #expect(throws: BusError.self) {
                    try await harness.client.call(DocumentsPosition.self, .init(id: made[1].id, filter: stanford), principal: me)
                }
                #expect(outside?.code == .notFound)
                let badCursor = await #expect(throws: BusError.self) {
                    try await harness.client.call(DocumentsList.self, .init(filter: all, after: "garbage"), principal: me)
                }
                #expect(badCursor?.code == .invalidArgument)
            }
        }
    }
}
