import BusCore
import Contracts
import Foundation

/// The payloads with no hand-written coder (`HandCodedJSON`), filled as the services fill them:
/// what the generic path of the bus's payload codec serves (`bus-bench codecs`, second table).
enum GenericPayloadSamples {
    private static let now = Date(timeIntervalSince1970: 1_764_000_000.123)
    private static let digest = String(repeating: "9f2c4be1", count: 8)

    private static func summary(_ index: Int) -> LegalVersionSummary {
        let at = now.addingTimeInterval(Double(index) * -86_400 * 30)
        return LegalVersionSummary(
            type: .termsOfService, version: "2025-\(String(format: "%02d", 12 - index % 12))-01", lastUpdated: at, publishedAt: at,
            effectiveAt: at.addingTimeInterval(86_400 * 14), digest: digest, material: index % 3 == 0)
    }

    /// `legal.current`'s reply for the terms the Legal service ships (its Markdown read from the
    /// source tree when run from the package's root; a 10 KB stand-in otherwise) and their outline.
    static let termsDocument: LegalDocument = {
        let path = "Services/Legal/Service/DefaultTexts/terms_of_service.md"
        let content = (try? String(contentsOfFile: path, encoding: .utf8)) ?? PayloadSamples.legalDocument.content
        return LegalDocument(summary: summary(0), content: content, outline: Outline.entries(of: content))
    }()

    /// `legal.history`'s reply: two years of monthly versions.
    static let history = LegalHistory.Reply(versions: (0..<24).map(summary))

    /// The session replies: `accounts.verify_session` (once per gateway request whose token is not
    /// cached), `accounts.refresh_session`, `accounts.sign_in_with_apple`.
    static let verifyReply = AccountsVerifySession.Reply(
        userId: UUID(), appleId: "001234.abcdef0123456789abcdef0123456789.0420", sessionId: UUID(), expiresAt: now, accountId: UUID())
    static let sessionGrant = SessionGrant(
        sessionId: UUID(), sessionToken: String(repeating: "eyJhbGciOiJFZERTQSJ9", count: 12), sessionExpiresAt: now,
        refreshToken: String(repeating: "r8Kq2", count: 9), userId: UUID(), accountId: UUID(), appleId: "001234.abcdef.0420")
    static let signInReply = AccountsSignInWithApple.Reply(
        user: AccountUser(
            id: UUID(), appleId: "001234.abcdef0123456789.0420", email: "user@privaterelay.appleid.com", name: "Jordan Example",
            username: "jordan", state: "CA", eligibilityConfirmedAt: now, tosVersion: "2025-09-01", tosAcceptedAt: now, createdAt: now,
            eligibilityRulesVersion: "2025-01", hasConfirmedEligibility: true, hasAcceptedTOS: true, needsToAcceptTOS: false),
        sessionId: UUID(), sessionToken: String(repeating: "eyJhbGciOiJFZERTQSJ9", count: 12), sessionExpiresAt: now,
        refreshToken: String(repeating: "r8Kq2", count: 9), appleTokenStored: true, accountId: UUID())

    /// A page of `documents.list` (or `documents.select`: the same rows) of `count` rows.
    static func documentsPage(_ count: Int) -> DocumentsList.Reply {
        let owner = UUID()
        let types = DocumentType.allCases
        return DocumentsList.Reply(
            documents: (0..<count).map { index in
                let pdf = index % 3 != 0
                return Document(
                    id: UUID(), ownerId: owner, type: types[index % types.count], title: "Junior season transcript \(index)",
                    description: index % 2 == 0 ? "Fall semester, weighted GPA 3.9 — uploaded from the app" : nil,
                    fileUrl: "\(owner.uuidString.lowercased())/\(UUID().uuidString.lowercased())",
                    fileType: pdf ? "application/pdf" : "video/mp4", version: 1 + index % 3, schoolId: index % 4 == 0 ? "school-\(index)" : nil,
                    createdAt: now.addingTimeInterval(Double(-index) * 3_600), length: 1_048_576 + Int64(index),
                    committedBytes: 1_048_576 + Int64(index), sha256: digest, bytesState: .available, possiblyCorrupt: false,
                    fileName: pdf ? "transcript-\(index).pdf" : "highlights-\(index).mp4")
            }, nextCursor: "MjAyNS0xMS0yNFQxMjowMDowMC4wMDBa", total: 1_000)
    }
    static let documentsPage50 = documentsPage(50)
    static let documentsPage200 = documentsPage(200)

    /// Event payloads, each carried by its own event envelope (an outbox page, `events.since`,
    /// is one envelope per event): `legal.published`, `account.deleted`, `session.revoked`.
    static let legalPublished = summary(0)
    static let accountDeleted = AccountDeleted(userId: UUID(), deletedAt: now)
    static let sessionRevoked = SessionRevoked(sessionId: UUID(), userId: UUID(), revokedAt: now)

    /// An operator's page of parked events (`<service>.events.dead-letters`).
    static let deadLetters = DeadLetters.ListReply(letters: (0..<100).map(deadLetter))

    private static func deadLetter(_ index: Int) -> DeadLetters.Letter {
        let fromAccounts = index % 2 == 0
        let error = "unavailable: the database did not answer within 5 s (attempt \(index % 5 + 1))"
        return DeadLetters.Letter(
            publisher: fromAccounts ? "accounts" : "legal", sequence: 10_000 + Int64(index),
            type: fromAccounts ? "account.deleted" : "legal.published", error: error, attempts: 5, parkedAt: now,
            retriedAt: index % 4 == 0 ? now : nil)
    }
}
