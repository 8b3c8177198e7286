import Contracts
import Foundation
import TestSupport
import Testing

@testable import Bus
@testable import BusCore

/// Every Legal and Audit contract type, encoded by the bus's fast payload encoder, must give
/// Foundation's bytes exactly, without falling back. (Here because the Bus tests cannot import
/// Contracts.) No database needed.
@Suite struct ContractsEncodingTests {
    static func expectSame<T: Encodable>(_ value: T, sourceLocation: SourceLocation = #_sourceLocation) {
        let foundation = try? BusJSON.encoder().encode(value)
        let fast = try? FastJSONEncoder.encode(value)
        #expect(foundation != nil, sourceLocation: sourceLocation)
        #expect(
            fast == foundation, "\(T.self): \(fast.map { String(decoding: $0, as: UTF8.self) } ?? "fell back")",
            sourceLocation: sourceLocation)
        #expect((try? BusJSON.encode(value)) == foundation, sourceLocation: sourceLocation)
    }

    /// Text with what a legal document or user agent may hold: markdown, quotes, slashes, tabs,
    /// non-ASCII and control characters.
    func text(_ r: inout SplitMix64, maxLength: Int = 40) -> String { r.text(maxLength: maxLength) }

    func date(_ r: inout SplitMix64) -> Date { r.date() }

    func maybe<T>(_ r: inout SplitMix64, _ make: (inout SplitMix64) -> T) -> T? { r.maybe(make) }

    func summary(_ r: inout SplitMix64) -> LegalVersionSummary {
        LegalVersionSummary(
            type: LegalDocumentType.allCases.randomElement(using: &r)!, version: text(&r, maxLength: 12), lastUpdated: date(&r),
            publishedAt: date(&r), effectiveAt: date(&r), digest: String(repeating: "ab", count: 32), material: .random(using: &r))
    }

    func receipt(_ r: inout SplitMix64) -> ConsentReceipt {
        ConsentReceipt(
            recordId: UUID(), documentType: .termsOfService, version: text(&r, maxLength: 10), digest: text(&r),
            action: AcceptanceAction.allCases.randomElement(using: &r)!, recordedAt: date(&r), chain: .random(in: 0...63, using: &r),
            position: .random(in: 0...Int64.max, using: &r), hash: text(&r),
            signature: Data((0..<64).map { _ in UInt8.random(in: 0...255, using: &r) }).base64EncodedString())
    }

    @Test func legalAndAuditContractsEncodeLikeFoundation() {
        var r = SplitMix64(seed: 42)
        for _ in 0..<200 {
            let outline = (0..<Int.random(in: 0...4, using: &r)).map { _ in
                LegalOutlineEntry(level: .random(in: 2...3, using: &r), title: text(&r), anchor: text(&r, maxLength: 20))
            }
            Self.expectSame(LegalDocument(summary: summary(&r), content: text(&r, maxLength: 400), outline: outline))
            Self.expectSame(summary(&r))
            Self.expectSame(LegalCurrent.Request(type: .privacyPolicy, at: maybe(&r, date)))
            Self.expectSame(LegalVersion.Request(type: .termsOfService, version: text(&r)))
            Self.expectSame(LegalHistory.Request(type: .privacyPolicy))
            Self.expectSame(LegalHistory.Reply(versions: (0..<3).map { _ in summary(&r) }))
            Self.expectSame(LegalAllVersions.Reply(versions: [summary(&r)]))
            Self.expectSame(
                LegalPublish.Request(
                    type: .termsOfService, version: text(&r), content: text(&r, maxLength: 300), lastUpdated: maybe(&r, date),
                    effectiveAt: maybe(&r, date), material: .random(using: &r)))
            Self.expectSame(receipt(&r))
            Self.expectSame(
                AuditRecord.Request(
                    userId: UUID(), documentType: .privacyPolicy, version: text(&r), action: .acknowledge,
                    clientIP: maybe(&r) { _ in "2001:db8::1" }, userAgent: maybe(&r) { text(&$0) }))
            Self.expectSame(AuditStatus.Request(userId: UUID()))
            Self.expectSame(
                AuditStatus.Reply(documents: [
                    AcceptanceStatus(
                        documentType: .termsOfService, currentVersion: maybe(&r) { text(&$0) }, lastAction: maybe(&r) { _ in .decline },
                        lastVersion: maybe(&r) { text(&$0) }, lastRecordedAt: maybe(&r, date), needsAcceptance: .random(using: &r))
                ]))
            Self.expectSame(
                AuditHistory.Request(
                    userId: UUID(), documentType: maybe(&r) { _ in .privacyPolicy }, limit: .random(in: 1...1000, using: &r),
                    before: maybe(&r) { text(&$0) }))
            Self.expectSame(
                AuditHistory.Reply(
                    records: [AcceptanceRecord(receipt: receipt(&r), clientIP: maybe(&r) { text(&$0) }, userAgent: nil)],
                    next: maybe(&r) { text(&$0) }))
            Self.expectSame(AuditVerifyReceipt.Reply(valid: .random(using: &r), reason: maybe(&r) { text(&$0) }))
            Self.expectSame(
                AuditVerify.Reply(
                    valid: false,
                    chains: [
                        AuditVerify.ChainReport(
                            chain: .random(in: 0...63, using: &r), records: .random(in: 0...Int64.max, using: &r), headHash: maybe(&r) { text(&$0) },
                            firstBrokenPosition: maybe(&r) { .random(in: Int64.min...Int64.max, using: &$0) }, problem: maybe(&r) { text(&$0) })
                    ],
                    badCheckpoints: (0..<Int.random(in: 0...3, using: &r)).map { _ in .random(in: 0...Int64.max, using: &r) }))
            Self.expectSame(AuditEraseSubject.Request(userId: UUID()))
            Self.expectSame(AuditEraseSubject.Reply(erasedRecords: .random(in: 0...Int.max, using: &r)))
            Self.expectSame(AuditPublicKey.Reply(publicKey: text(&r)))
            Self.expectSame(EventsSince.Request(after: .random(in: -1...Int64.max, using: &r), limit: .random(in: 0...1000, using: &r)))
            Self.expectSame(EventsSince.Reply(count: .random(in: 0...1000, using: &r), latestSequence: .random(in: 0...Int64.max, using: &r)))
        }
        Self.expectSame(Empty())
        Self.expectSame(AcceptanceAction.accept)
        Self.expectSame(LegalDocumentType.privacyPolicy)
    }
}
