import Contracts
import Foundation
import TestSupport
import Testing

@testable import Bus

extension ReliabilityTests {
    /// Hostile text in every kind of text field: SQL-looking strings are stored and returned
    /// verbatim (never executed), invalid UTF-8 is refused or replaced (never stored broken),
    /// messages above `ZMQ_MAXMSGSIZE` never reach a handler, path traversal never escapes
    /// `documents/<id>/`.
    @Suite("Reliability: hostile text")
    struct HostileTextTests {
        static let injections = [
            "Robert'); DROP TABLE accounts.users;--",
            "' OR '1'='1",
            "1; DELETE FROM documents.documents WHERE true; --",
            "$$; SELECT pg_sleep(10); $$",
            "\\'; TRUNCATE audit.records CASCADE; --",
            "E'\\x00' || chr(0) || 'name",
        ]

        @Test func sqlLookingStringsAreStoredAndReturnedVerbatim() async throws {
            try await Stack.run { stack in
                let terms = try await stack.currentTerms()
                for text in Self.injections {
                    let user = try await stack.accounts.call(
                        AccountsGetOrCreate.self,
                        .init(
                            appleId: "apple." + text, email: "x@example.com", name: text, state: "CA", eligibilityCertified: true,
                            tosVersion: terms, clientIP: "203.0.113.9", userAgent: text),
                        principal: Stack.gateway)
                    #expect(user.name == text && user.appleId == "apple." + text)
                    let owner = try #require(user.id)
                    let principal = Principal.user(owner.uuidString.lowercased())
                    let document = try await stack.documents.call(
                        DocumentsCreate.self,
                        .init(
                            ownerId: owner, type: .transcript, title: text, description: text, fileType: "application/pdf",
                            schoolId: text, fileName: text, length: 10),
                        principal: principal)
                    #expect(document.title == text && document.description == text && document.schoolId == text)
                    let read = try await stack.documents.call(DocumentsGet.self, .init(id: document.id), principal: principal)
                    #expect(read.title == text)
                    let history = try await stack.audit.call(AuditHistory.self, .init(userId: owner), principal: principal)
                    #expect(!history.records.isEmpty)
                }
                // Every table the strings named is intact, and holds what was written.
                #expect(try await stack.count("SELECT count(*)::bigint FROM accounts.users") == Self.injections.count)
                #expect(try await stack.count("SELECT count(*)::bigint FROM documents.documents") == Self.injections.count)
                #expect(try await stack.count("SELECT count(*)::bigint FROM audit.records") == Self.injections.count)
            }
        }

        @Test func pathTraversalStaysInsideTheDocumentsFolder() async throws {
            try await Stack.run { stack in
                let owner = try await stack.signUp()
                let principal = Principal.user(owner.uuidString.lowercased())
                for name in ["../../etc/passwd", "..\\..\\windows\\system32", "/etc/shadow", "....//....//x", "%2e%2e%2fetc", "..", "a/../../b"] {
                    let document = try await stack.documents.call(
                        DocumentsCreate.self,
                        .init(ownerId: owner, type: .transcript, title: "T", fileType: "application/pdf", fileName: name, length: 10),
                        principal: principal)
                    let parts = document.fileUrl.split(separator: "/", omittingEmptySubsequences: false)
                    #expect(parts.count == 3 && parts[0] == "documents" && parts[1] == document.id.uuidString.lowercased(), "\(document.fileUrl)")
                    #expect(!parts[2].hasPrefix(".") && !parts[2].contains("/") && !parts[2].contains("\\"), "\(document.fileUrl)")
                }
                for url in [
                    "documents/../../etc/passwd", "../documents/\(UUID())/x", "documents/\(UUID())/../../x", "/etc/passwd",
                    "file:///etc/passwd", "documents/\(UUID())/x\u{0}y",
                ] {
                    let error = await #expect(throws: BusError.self) {
                        _ = try await stack.documents.call(DocumentsGet.self, .init(fileUrl: url), principal: principal)
                    }
                    #expect(error?.code == .invalidArgument || error?.code == .notFound, "\(url): \(String(describing: error))")
                }
            }
        }

        @Test func invalidUTF8IsRefusedOrReplacedNeverStoredBroken() async throws {
            try await Stack.run { stack in
                let owner = try await stack.signUp()
                let raw = try await RawPeer.connect(stack.rpc["Documents"]!, logger: testLogger())
                // A documents.create whose title holds bytes that are not UTF-8 (a lone continuation
                // byte, an overlong `/`, a surrogate half): JSON's transport allows any bytes.
                var accepted: [Document] = []
                for bad in [Data([0x80]), Data([0xC0, 0xAF]), Data([0xED, 0xA0, 0x80]), Data([0xFF, 0xFE])] {
                    let before = Data(#"{"ownerId":"\#(owner.uuidString.lowercased())","type":"transcript","title":"a"#.utf8)
                    let after = Data(#"b","fileType":"application/pdf","fileName":"t.pdf","length":10}"#.utf8)
                    let envelope = Envelope(
                        kind: .request, type: DocumentsCreate.type, principal: .user(owner.uuidString.lowercased()), payload: before + bad + after)
                    let frames = try await raw.roundTrip(Frames.dealer(EnvelopeCodec.encode(envelope), []), timeout: .seconds(20))
                    let body = try #require(Frames.splitDealer(frames))
                    let reply = try EnvelopeCodec.decode(body.envelope)
                    if let error = reply.error {
                        #expect(error.code == .invalidArgument, "\(error)")
                    } else {
                        accepted.append(try reply.decodePayload(Document.self))
                    }
                }
                // Whatever was accepted is stored exactly as it was answered (valid UTF-8: PostgreSQL
                // checks its input), and nothing else was stored.
                let stored = try await stack.database.pool.withConnection { db in
                    try Dictionary(
                        uniqueKeysWithValues: db.query("SELECT id, title FROM documents.documents").map { try $0.decode(UUID.self, String.self) })
                }
                #expect(stored.count == accepted.count)
                for document in accepted { #expect(stored[document.id] == document.title) }
                print("RELIABILITY invalid-utf8 sent=4 accepted-with-replacement=\(accepted.count) refused=\(4 - accepted.count)")
                await raw.close()
            }
        }

        @Test func messagesAboveTheSizeLimitNeverReachAHandler() async throws {
            try await Stack.run { stack in
                let raw = try await RawPeer.connect(stack.rpc["Legal"]!, logger: testLogger())
                let huge = String(repeating: "x", count: 70 << 20)
                let envelope = Envelope(
                    kind: .request, type: LegalCurrent.type, payload: Data(#"{"type":"terms_of_service","pad":"\#(huge)"}"#.utf8))
                raw.send(Frames.dealer(EnvelopeCodec.encode(envelope), []))
                await #expect(throws: RawPeerTimeout.self, "a 70 MiB message was answered") { _ = try await raw.next(timeout: .seconds(3)) }
                await raw.close()
                // The service is unharmed and answers the next caller.
                #expect(try await stack.currentTerms().isEmpty == false)
                let process = try #require(stack.process("Legal"))
                #expect(process.process.isRunning)
            }
        }
    }
}
