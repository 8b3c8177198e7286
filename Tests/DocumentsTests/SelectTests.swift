import Bus
import Contracts
import Foundation
import TestSupport
import Testing

extension DocumentsSuites {
    /// `documents.select`: PostgREST reads done in Documents' SQL, against 60 real documents.
    @Suite("Documents: PostgREST select")
    struct SelectTests {
        /// A PDF of exactly `size` bytes (padding before the trailer, so `%%EOF` stays last).
        static func pdf(size: Int) -> Data {
            var bytes = Data("%PDF-1.7\n".utf8)
            let trailer = Data("\ntrailer <<>>\n%%EOF\n".utf8)
            bytes.append(Data(repeating: 0x20, count: size - bytes.count - trailer.count))
            bytes.append(trailer)
            return bytes
        }

        static let types: [DocumentType] = [.transcript, .resume, .highlightVideo, .statsSheet]
        static let hostileTitle = "'; DROP TABLE documents.documents; --"

        @Test("filters, typed order, count, limit/offset and hostile values, all in SQL")
        func selectPushesTheQueryDown() async throws {
            try await DocumentsHarness.run { harness in
                let owner = UUID()
                let me = DocumentsHarness.user(owner)
                // 60 documents: sizes a permutation crossing digit counts (so text order would differ),
                // types cycling (videos by type), every third without a school.
                var made: [Document] = []
                for index in 0..<60 {
                    let size = 100 + ((index * 37) % 60) * 20
                    let type = Self.types[index % 4]
                    made.append(
                        try await harness.store(
                            owner: owner, Self.pdf(size: size), type: type, title: index == 59 ? Self.hostileTitle : "Doc \(index)",
                            fileType: "application/pdf", schoolId: index % 3 == 0 ? nil : "school-\(index % 5)"))
                }
                _ = try await harness.store(owner: UUID(), Samples.pdf, title: "Doc 1")
                _ = try await harness.create(owner: owner, length: 100)
                func select(_ query: RestQuery) async throws -> DocumentsSelect.Reply {
                    try await harness.client.call(DocumentsSelect.self, .init(ownerId: owner, query: query), principal: me)
                }

                // Time order, a page of 25 and the exact count.
                let byTime = try await select(RestQuery(order: [RestOrder("created_at")], limit: 25, offset: 0, count: true))
                #expect(byTime.documents.map(\.id) == made.prefix(25).map(\.id))
                #expect(byTime.total == 60)
                let lastPage = try await select(RestQuery(order: [RestOrder("created_at")], limit: 25, offset: 50, count: true))
                #expect(lastPage.documents.map(\.id) == made.suffix(10).map(\.id) && lastPage.total == 60)
                // Number order: by size as numbers, descending.
                let bySize = try await select(RestQuery(order: [RestOrder("file_size", descending: true)], limit: 60))
                #expect(bySize.documents.map(\.length) == made.map(\.length).sorted(by: >))
                #expect(bySize.total == nil)
                // Comparisons on numbers and times.
                let middle = try await select(
                    RestQuery(
                        filters: [
                            .condition(.init("file_size", .gte, ["500"])), .condition(.init("file_size", .lt, ["1000"])),
                        ], limit: 100))
                #expect(Set(middle.documents.map(\.id)) == Set(made.filter { (500..<1000).contains($0.length) }.map(\.id)))
                let since = Timestamp.format(made[29].createdAt.addingTimeInterval(made[30].createdAt.timeIntervalSince(made[29].createdAt) / 2))
                let recent = try await select(RestQuery(filters: [.condition(.init("created_at", .gte, [since]))], limit: 100, count: true))
                #expect(recent.total == 30 && Set(recent.documents.map(\.id)) == Set(made.suffix(30).map(\.id)))
                // in.(), or=(…) with a nested and(…), is.null, ilike, not.
                let typed = try await select(
                    RestQuery(filters: [.condition(.init("type", .in, ["resume", "stats_sheet"]))], limit: 100, count: true))
                #expect(typed.total == 30 && typed.documents.allSatisfy { [.resume, .statsSheet].contains($0.type) })
                let either = try await select(
                    RestQuery(
                        filters: [
                            .group(
                                RestGroup(
                                    .or,
                                    [
                                        .condition(.init("type", .eq, ["highlight_video"])),
                                        .group(
                                            RestGroup(
                                                .and, [.condition(.init("school_id", .is, ["null"])), .condition(.init("file_size", .lt, ["400"]))])),
                                    ]))
                        ], limit: 100))
                let expected = made.filter { $0.type == .highlightVideo || ($0.schoolId == nil && $0.length < 400) }
                #expect(Set(either.documents.map(\.id)) == Set(expected.map(\.id)) && !expected.isEmpty)
                let videos = try await select(RestQuery(filters: [.condition(.init("is_video", .is, ["true"]))], limit: 100, count: true))
                #expect(videos.total == 15)
                let titled = try await select(
                    RestQuery(
                        filters: [
                            .condition(.init("title", .ilike, ["doc 1*"])), .condition(.init("school_id", .is, ["null"])),
                        ], limit: 100))
                #expect(Set(titled.documents.map(\.title)) == Set(made.filter { $0.title.hasPrefix("Doc 1") && $0.schoolId == nil }.map(\.title)))
                let notResume = try await select(
                    RestQuery(filters: [.condition(.init("type", .eq, ["resume"], negated: true))], limit: 0, count: true))
                #expect(notResume.documents.isEmpty && notResume.total == 45)

                // limit=1 reads one row: the reply carries exactly one document, and the count is separate.
                let one = try await select(RestQuery(order: [RestOrder("file_size")], limit: 1, count: true))
                #expect(one.documents.count == 1 && one.documents[0].length == 100 && one.total == 60)

                // Hostile text is a value: it matches itself literally and changes nothing.
                let hostile = try await select(RestQuery(filters: [.condition(.init("title", .eq, [Self.hostileTitle]))], limit: 10))
                #expect(hostile.documents.map(\.id) == [made[59].id])
                for value in ["x' OR '1'='1", "%' --", "\\'; SELECT 1; --"] {
                    #expect(try await select(RestQuery(filters: [.condition(.init("title", .like, [value]))], limit: 10)).documents.isEmpty)
                }
                #expect(try await select(RestQuery(limit: 0, count: true)).total == 60)

                // Refusals: bad values and columns with PostgREST's codes, another owner forbidden.
                for (query, code) in [
                    (RestQuery(filters: [.condition(.init("file_size", .gt, ["1; DROP"]))]), "22P02"),
                    (RestQuery(filters: [.condition(.init("owner_id", .eq, [UUID().uuidString]))]), "42703"),
                    (RestQuery(order: [RestOrder("lo_oid")]), "42703"),
                    (RestQuery(limit: RestQuery.maximumRows + 1), "PGRST100"),
                ] {
                    let error = await #expect(throws: BusError.self) { try await select(query) }
                    #expect(error?.code == .invalidArgument && error?.details?["code"] == code)
                }
                let other = await #expect(throws: BusError.self) {
                    try await harness.client.call(DocumentsSelect.self, .init(ownerId: UUID(), query: RestQuery()), principal: me)
                }
                #expect(other?.code == .forbidden)
            }
        }
    }
}
