import BusCore
import Contracts
import Foundation

/// Real bus payloads for `bus-bench codecs`, filled as the services fill them: the acceptance
/// path's batches (the gateway's `accounts.accept_terms_batch`, Accounts' `audit.record_batch`,
/// both ways), a page of the consent stream Audit reads from Accounts, and a legal document reply
/// with a 10 KB text.
enum PayloadSamples {
    /// Items per batch: what the gateway gathers under a few thousand acceptances a second.
    static let batchItems = 64
    private static let now = Date(timeIntervalSince1970: 1_764_000_000.123)
    private static let agent = "RecruitingCompass/3.2 (iPhone; iOS 18.1; Scale/3.00) CFNetwork/1568 Darwin/24.1.0"
    private static let digest = String(repeating: "9f2c4be1", count: 8)

    static let acceptTermsBatchRequest = AccountsAcceptTermsBatch.Request(
        items: (0..<batchItems).map { index in
            let user = UUID()
            return AccountsAcceptTermsBatch.Item(
                request: AccountsTermsRequest(userId: user, tosVersion: "2025-09-01", clientIP: "203.0.113.\(index)", userAgent: agent),
                idempotencyKey: "http:\(user.uuidString.lowercased()):accept-\(index)")
        })

    static let acceptTermsBatchReply = AccountsAcceptTermsBatch.Reply(
        outcomes: acceptTermsBatchRequest.items.enumerated().map { index, item in
            index % 16 == 15
                ? ItemOutcome(error: BusError(.conflict, "terms version is not in effect", details: ["currentVersion": "2025-10-01"]))
                : ItemOutcome(
                    value: AccountUser(
                        id: item.request.userId, appleId: "001234.\(index)abcdef0123456789.0420", email: "user\(index)@privaterelay.appleid.com",
                        name: "Jordan Example", username: "jordan\(index)", state: "CA", eligibilityConfirmedAt: now,
                        tosVersion: "2025-09-01", tosAcceptedAt: now, createdAt: now, eligibilityRulesVersion: "2025-01",
                        hasConfirmedEligibility: true, hasAcceptedTOS: true, needsToAcceptTOS: false))
        })

    static let auditRecordBatchRequest = AuditRecordBatch.Request(
        items: acceptTermsBatchRequest.items.map { item in
            AuditRecordBatch.Item(
                record: AuditRecord.Request(
                    userId: item.request.userId, documentType: .termsOfService, version: "2025-09-01", action: .accept,
                    clientIP: item.request.clientIP, userAgent: item.request.userAgent),
                idempotencyKey: item.idempotencyKey)
        }, signReceipts: false)

    static let auditRecordBatchReply = AuditRecordBatch.Reply(
        outcomes: auditRecordBatchRequest.items.enumerated().map { index, item in
            ItemOutcome(
                value: ConsentReceipt(
                    recordId: UUID(), documentType: .termsOfService, version: "2025-09-01", digest: digest, action: .accept,
                    recordedAt: now, chain: index % 4, position: 1_000_000 + Int64(index), hash: digest, signature: ""))
        })

    /// `accounts.consents_since`'s reply: a page of the consent stream as Accounts reads it for Audit,
    /// one act per acceptance of the batch above, with its address and agent.
    static let consentsPage = AccountsConsentsSince.Reply(
        entries: acceptTermsBatchRequest.items.enumerated().map { index, item in
            AccountsConsentsSince.Entry(
                position: ConsentStreamPosition(transaction: 4_294_967_296 + 7_000_000, entry: 90_000_000 + Int64(index)), kind: .consent,
                userId: item.request.userId, recordId: UUID(), documentType: .termsOfService, version: "2025-09-01", action: .accept,
                idempotencyKey: item.idempotencyKey, recordedMilliseconds: now.millisecondsSince1970, clientIP: item.request.clientIP,
                userAgent: item.request.userAgent)
        },
        latest: ConsentStreamPosition(transaction: 4_294_967_296 + 7_000_000, entry: 90_000_000 + Int64(batchItems - 1)), remaining: 0)

    /// `legal.current`'s reply: about 10 KB of Markdown with quotes, newlines and non-ASCII text.
    static let legalDocument: LegalDocument = {
        var content = "# Terms of Service\n\n"
        var outline: [LegalOutlineEntry] = []
        var section = 0
        while content.utf8.count < 10_000 {
            section += 1
            content += "## \(section). Section \(section)\n\n"
            content += "By using the app you agree to these terms (\"Terms\"). Contests are skill-based; "
            content += "entry fees, prizes and eligibility — including age and state — are set out below.\n\n"
            content += "- You must be 18 or older.\n- Residents of some states may not enter: see §\(section).\n\n"
            outline.append(LegalOutlineEntry(level: 2, title: "\(section). Section \(section)", anchor: "\(section)-section-\(section)"))
        }
        return LegalDocument(
            summary: LegalVersionSummary(
                type: .termsOfService, version: "2025-09-01", lastUpdated: now, publishedAt: now, effectiveAt: now, digest: digest,
                material: true),
            content: content, outline: outline)
    }()
}
