import Bus
import Contracts
import Foundation
import TestSupport
import Testing

/// The deletion preview and deletion when the Documents service cannot give its counts: the
/// preview still answers (counts nil, said to be unknown) and deletion goes through.
@Suite(.serialized) struct DocumentsPreviewTests {
    @Test func documentsNotAnsweringNeverBlocksPreviewOrDeletion() async throws {
        try await AccountsHarness.run { harness in
            let id = try #require(try await harness.signUp().id)
            // Documents' address has no listener: the preview waits at most the configured 300 ms,
            // then answers without the counts (below). Not timed: a loaded machine stretches any wait.
            let request = try await harness.requestDeletion(id)
            let documents = try #require(request.preview.deleted.first { $0.category == "documents" })
            #expect(documents.count == nil && documents.description.contains("could not be gathered"))
            let deleted = try await harness.confirmDeletion(id, request.requestId)
            let certificate = try #require(deleted.certificate)
            let entry = try #require(certificate.claims.deleted.first { $0.category == "documents" })
            #expect(entry.count == nil && entry.bytes == nil)
            #expect(try await harness.refusal { try await harness.get(id) }.code == .gone)
        }
    }

    @Test func documentsNotConfiguredIsNotAsked() async throws {
        try await AccountsHarness.run(extra: ["ACCOUNTS_DOCUMENTS_USAGE_TIMEOUT": "0"]) { harness in
            let id = try #require(try await harness.signUp().id)
            let preview = try await harness.accountsClient.call(AccountsDeletionPreview.self, .init(userId: id), principal: .user(id.uuidString))
            let links = try #require(preview.deleted.first { $0.category == "share_links" })
            #expect(links.count == nil && links.description.contains("could not be gathered"))
            #expect(preview.deleted.first { $0.category == "sessions" }?.count == 0)
        }
    }
}
