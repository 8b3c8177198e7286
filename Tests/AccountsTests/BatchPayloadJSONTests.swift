import Contracts
import Foundation
import TestSupport
import Testing

@testable import BusCore

/// The acceptance path's batch payloads have hand-written JSON coders (``HandCodedJSON``). They
/// must write Foundation's bytes exactly and read what `Decodable` reads, and leave to it, whose
/// error then stands, every shape they do not handle. (Here because these are Accounts' and
/// Audit's contracts and the Bus tests cannot import Contracts.) No database needed.
@Suite struct BatchPayloadJSONTests {
    // MARK: Random payloads

    /// Text as users and clients send it: quotes, slashes, control characters, non-ASCII.
    func text(_ r: inout SplitMix64, maxLength: Int = 30) -> String { r.text(maxLength: maxLength) }

    func date(_ r: inout SplitMix64) -> Date { r.date() }

    func maybe<T>(_ r: inout SplitMix64, _ make: (inout SplitMix64) -> T) -> T? { r.maybe(make) }

    func error(_ r: inout SplitMix64) -> BusError {
        BusError(.conflict, text(&r), details: maybe(&r) { ["currentVersion": text(&$0)] })
    }

    func acceptTermsRequest(_ r: inout SplitMix64) -> AccountsAcceptTermsBatch.Request {
        AccountsAcceptTermsBatch.Request(
            items: (0..<Int.random(in: 0...5, using: &r)).map { _ in
                AccountsAcceptTermsBatch.Item(
                    request: AccountsTermsRequest(
                        userId: UUID(), tosVersion: text(&r, maxLength: 12), clientIP: maybe(&r) { text(&$0) },
                        userAgent: maybe(&r) { text(&$0) }),
                    idempotencyKey: text(&r))
            })
    }

    func user(_ r: inout SplitMix64) -> AccountUser {
        AccountUser(
            id: maybe(&r) { _ in UUID() }, appleId: text(&r), email: maybe(&r) { text(&$0) }, name: maybe(&r) { text(&$0) },
            username: maybe(&r) { text(&$0) }, state: maybe(&r) { _ in "CA" }, eligibilityConfirmedAt: maybe(&r, date),
            tosVersion: maybe(&r) { text(&$0) }, tosAcceptedAt: maybe(&r, date), createdAt: maybe(&r, date),
            eligibilityRulesVersion: maybe(&r) { text(&$0) }, hasConfirmedEligibility: .random(using: &r),
            hasAcceptedTOS: .random(using: &r), needsToAcceptTOS: .random(using: &r))
    }

    func recordRequest(_ r: inout SplitMix64) -> AuditRecordBatch.Request {
        AuditRecordBatch.Request(
            items: (0..<Int.random(in: 0...5, using: &r)).map { _ in
                AuditRecordBatch.Item(
                    record: AuditRecord.Request(
                        userId: UUID(), documentType: LegalDocumentType.allCases.randomElement(using: &r)!, version: text(&r),
                        action: AcceptanceAction.allCases.randomElement(using: &r)!, clientIP: maybe(&r) { text(&$0) },
                        userAgent: maybe(&r) { text(&$0) }),
                    idempotencyKey: text(&r))
            },
            signReceipts: .random(using: &r))
    }

    func receipt(_ r: inout SplitMix64) -> ConsentReceipt {
        ConsentReceipt(
            recordId: UUID(), documentType: LegalDocumentType.allCases.randomElement(using: &r)!, version: text(&r), digest: text(&r),
            action: AcceptanceAction.allCases.randomElement(using: &r)!, recordedAt: date(&r),
            chain: .random(in: Int.min...Int.max, using: &r), position: .random(in: Int64.min...Int64.max, using: &r),
            hash: text(&r), signature: text(&r),
            proof: maybe(&r) {
                ReceiptProof(
                    index: .random(in: 0...1000, using: &$0), size: .random(in: 1...1001, using: &$0),
                    path: (0..<Int.random(in: 0...6, using: &$0)).map { _ in String(repeating: "0f", count: 32) })
            })
    }

    func position(_ r: inout SplitMix64) -> ConsentStreamPosition {
        ConsentStreamPosition(transaction: .random(in: Int64.min...Int64.max, using: &r), entry: .random(in: 0...Int64.max, using: &r))
    }

    /// A page of the consent stream: acts with and without their optional fields, and deletions.
    func consentPage(_ r: inout SplitMix64) -> AccountsConsentsSince.Reply {
        AccountsConsentsSince.Reply(
            entries: (0..<Int.random(in: 0...5, using: &r)).map { _ in
                if Int.random(in: 0..<4, using: &r) == 0 {
                    return AccountsConsentsSince.Entry(
                        position: position(&r), kind: .deleted, userId: UUID(), recordedMilliseconds: .random(in: 0...Int64.max, using: &r))
                }
                return AccountsConsentsSince.Entry(
                    position: position(&r), kind: .consent, userId: UUID(), recordId: maybe(&r) { _ in UUID() },
                    documentType: maybe(&r) { LegalDocumentType.allCases.randomElement(using: &$0)! }, version: maybe(&r) { text(&$0) },
                    action: maybe(&r) { AcceptanceAction.allCases.randomElement(using: &$0)! }, idempotencyKey: maybe(&r) { text(&$0) },
                    recordedMilliseconds: .random(in: Int64.min...Int64.max, using: &r), clientIP: maybe(&r) { text(&$0) },
                    userAgent: maybe(&r) { text(&$0) })
            },
            latest: maybe(&r, position), remaining: .random(in: 0...AccountsConsentsSince.remainingCountLimit, using: &r))
    }

    func outcomes<T>(_ r: inout SplitMix64, _ make: (inout SplitMix64) -> T) -> [ItemOutcome<T>] {
        (0..<Int.random(in: 0...5, using: &r)).map { _ in
            Int.random(in: 0..<4, using: &r) == 0 ? ItemOutcome(error: error(&r)) : ItemOutcome(value: make(&r))
        }
    }

    // MARK: Checks

    /// The hand-written coder writes Foundation's bytes and reads them back, and the bus's codec
    /// (which runs it first) does too.
    static func expectRoundTrip<T: HandCodedJSON & Equatable>(_ value: T, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let foundation = try BusJSON.encoder().encode(value)
        let hand = BusJSON.handEncoded(value)
        #expect(
            hand == foundation, "\(T.self): \(hand.map { String(decoding: $0, as: UTF8.self) } ?? "threw")",
            sourceLocation: sourceLocation)
        #expect(try BusJSON.encode(value) == foundation, sourceLocation: sourceLocation)
        // Compared with what Foundation reads (not `value`): a date's milliseconds do not always
        // come back as the same `Double`, for either decoder.
        let read = try BusJSON.decoder().decode(T.self, from: foundation)
        #expect(BusJSON.handDecoded(T.self, from: foundation) == read, sourceLocation: sourceLocation)
        #expect(try BusJSON.decode(T.self, from: foundation) == read, sourceLocation: sourceLocation)
    }

    /// What the hand-written decoder reads from `json` is what Foundation's `Decodable` reads.
    /// With `byHand` false, the coder must leave the document to `Decodable`.
    static func expectReadsLikeDecodable<T: HandCodedJSON & Equatable>(
        _ type: T.Type, _ json: String, byHand: Bool = true, sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        let data = Data(json.utf8)
        let foundation = try BusJSON.decoder().decode(T.self, from: data)
        #expect(BusJSON.handDecoded(T.self, from: data) == (byHand ? foundation : nil), sourceLocation: sourceLocation)
        #expect(try BusJSON.decode(T.self, from: data) == foundation, sourceLocation: sourceLocation)
    }

    /// `json` is refused: the hand-written coder leaves it to `Decodable`, whose error (returned)
    /// names `field`.
    @discardableResult
    static func expectRefused<T: HandCodedJSON>(
        _ type: T.Type, _ json: String, naming field: String, in kind: Envelope.Kind, of method: String,
        sourceLocation: SourceLocation = #_sourceLocation
    ) -> BusError? {
        #expect(BusJSON.handDecoded(T.self, from: Data(json.utf8)) == nil, sourceLocation: sourceLocation)
        let envelope = Envelope(kind: kind, type: method, payload: Data(json.utf8))
        do {
            _ = try envelope.decodePayload(T.self)
            Issue.record("\(json) was accepted", sourceLocation: sourceLocation)
            return nil
        } catch {
            #expect(error.message.contains(field), "\(error.message)", sourceLocation: sourceLocation)
            return error
        }
    }

    // MARK: Tests

    @Test func theBatchPayloadsRoundTripWithFoundationsBytes() throws {
        var r = SplitMix64(seed: 15)
        for _ in 0..<300 {
            try Self.expectRoundTrip(acceptTermsRequest(&r))
            try Self.expectRoundTrip(AccountsAcceptTermsBatch.Reply(outcomes: outcomes(&r, user)))
            try Self.expectRoundTrip(recordRequest(&r))
            try Self.expectRoundTrip(AuditRecordBatch.Reply(outcomes: outcomes(&r, receipt)))
            try Self.expectRoundTrip(user(&r))
            try Self.expectRoundTrip(receipt(&r))
            if let item = recordRequest(&r).items.first { try Self.expectRoundTrip(item.record) }
            if let item = acceptTermsRequest(&r).items.first { try Self.expectRoundTrip(item.request) }
            let page = consentPage(&r)
            try Self.expectRoundTrip(page)
            if let entry = page.entries.first { try Self.expectRoundTrip(entry) }
            try Self.expectRoundTrip(position(&r))
        }
    }

    /// What a sender other than our encoder may write: members in another order, white space,
    /// members the type does not know, `null` for an absent optional, an outcome with neither.
    @Test func otherSpellingsOfTheSameValueReadAsDecodableReadsThem() throws {
        let user = "3F2504E0-4F89-11D3-9A0C-0305E82C3301"
        try Self.expectReadsLikeDecodable(
            AccountsAcceptTermsBatch.Request.self,
            #"""
             { "items" : [ { "request" : { "userId" : "\#(user)", "tosVersion" : "v\u00e9", "clientIP" : null, "extra" : [1, {"a": 2}] },
               "idempotencyKey" : "k\/1", "future" : true } ], "version": 2 }
            """#)
        try Self.expectReadsLikeDecodable(
            AccountsAcceptTermsBatch.Reply.self,
            #"""
            {"outcomes":[{"value":{"needsToAcceptTOS":false,"hasAcceptedTOS":true,"hasConfirmedEligibility":true,
              "appleId":"001.a","id":null,"email":null,"createdAt":"2025-11-24T16:00:00.123Z"}},
              {"error":{"code":"conflict","message":"terms version is not in effect"}},{}]}
            """#)
        try Self.expectReadsLikeDecodable(
            AuditRecordBatch.Request.self,
            #"""
            {"signReceipts":false,"items":[{"record":{"version":"1","userId":"\#(user)","documentType":"privacy_policy",
              "action":"decline","userAgent":"curl/8"},"idempotencyKey":"k"}]}
            """#)
        try Self.expectReadsLikeDecodable(
            AuditRecordBatch.Reply.self,
            #"""
            {"outcomes":[{"value":{"version":"1","signature":"","recordedAt":"2025-11-24T16:00:00.000Z","recordId":"\#(user)",
              "proof":null,"position":-7,"hash":"ab","documentType":"terms_of_service","digest":"cd","chain":3,"action":"accept"}},
              {"value":{"version":"1","signature":"","recordedAt":"2025-11-24T16:00:00Z","recordId":"\#(user)",
              "proof":{"size":2,"path":["00"],"index":1},"position":9,"hash":"ab","documentType":"terms_of_service","digest":"cd",
              "chain":0,"action":"acknowledge"}}]}
            """#)
        try Self.expectReadsLikeDecodable(
            AccountsConsentsSince.Reply.self,
            #"""
            { "remaining" : 0, "latest" : null, "next" : 1, "entries" : [
              {"userId":"\#(user)","kind":"deleted","position":{"transaction":7,"entry":1,"shard":0},"recordedMilliseconds":5,
               "recordId":null,"documentType":null,"version":null,"action":null,"idempotencyKey":null,"clientIP":null,"userAgent":null},
              {"userAgent":"Playoff\/1.0 \u00e9","clientIP":"203.0.113.9","recordedMilliseconds":-1,"idempotencyKey":"k","action":"decline",
               "version":"2025-12-12","documentType":"privacy_policy","recordId":"\#(user)","position":{"entry":2,"transaction":8},
               "kind":"consent","userId":"\#(user)"} ] }
            """#)
    }

    /// Shapes the coders leave to `Decodable`: its value or its error (naming the field) is the
    /// one the caller gets, exactly as before the coders existed.
    @Test func whatTheCodersDoNotHandleIsDecodablesToAnswer() throws {
        let user = "3F2504E0-4F89-11D3-9A0C-0305E82C3301"
        // Escaped keys: Foundation matches them by their text.
        try Self.expectReadsLikeDecodable(
            AccountsAcceptTermsBatch.Request.self,
            #"{"\u0069tems":[{"request":{"userId":"\#(user)","tosVersion":"1"},"idempotencyKey":"k"}]}"#, byHand: false)
        // A number where Foundation also takes one the coder does not parse itself.
        try Self.expectReadsLikeDecodable(
            AuditRecordBatch.Reply.self,
            #"{"outcomes":[{"value":{"version":"1","signature":"","recordedAt":"2025-11-24T16:00:00Z","recordId":"\#(user)","#
                + #""position":1.0,"hash":"ab","documentType":"terms_of_service","digest":"cd","chain":3,"action":"accept"}}]}"#,
            byHand: false)

        // Bad input: each refused with Foundation's message, which names the field.
        let bad: [(String, String)] = [
            (#"{"items":[{"request":{"userId":"\#(user)"},"idempotencyKey":"k"}]}"#, "tosVersion"),
            (#"{"items":[{"request":{"userId":"not-a-uuid","tosVersion":"1"},"idempotencyKey":"k"}]}"#, "userId"),
            (#"{"items":[{"request":{"userId":"\#(user)","tosVersion":7},"idempotencyKey":"k"}]}"#, "tosVersion"),
            (#"{"items":{}}"#, "items"),
            (#"{}"#, "items"),
        ]
        for (json, field) in bad {
            let error = Self.expectRefused(
                AccountsAcceptTermsBatch.Request.self, json, naming: field, in: .request, of: AccountsAcceptTermsBatch.type)
            #expect(error?.code == .invalidArgument)
        }
        // A page with an entry of a kind this reader does not know, or without its position.
        Self.expectRefused(
            AccountsConsentsSince.Reply.self,
            #"{"entries":[{"position":{"transaction":1,"entry":1},"kind":"moved","userId":"\#(user)","recordedMilliseconds":1}],"#
                + #""remaining":0}"#, naming: "kind", in: .reply, of: AccountsConsentsSince.type)
        Self.expectRefused(
            AccountsConsentsSince.Reply.self, #"{"entries":[{"kind":"deleted","userId":"\#(user)","recordedMilliseconds":1}],"remaining":0}"#,
            naming: "position", in: .reply, of: AccountsConsentsSince.type)
        let badRecord =
            #"{"items":[{"record":{"userId":"\#(user)","documentType":"cookies","version":"1","action":"accept"},"#
            + #""idempotencyKey":"k"}],"signReceipts":true}"#
        Self.expectRefused(AuditRecordBatch.Request.self, badRecord, naming: "documentType", in: .request, of: AuditRecordBatch.type)
    }

    /// Without the hand-written coders the fast path reads and writes the same: the generic path
    /// they fall back to stays correct.
    @Test func theGenericPathAgreesWithTheHandWrittenCoders() throws {
        var r = SplitMix64(seed: 16)
        for _ in 0..<50 {
            let reply = AuditRecordBatch.Reply(outcomes: outcomes(&r, receipt))
            let data = try BusJSON.encodedWithoutHandCoder(reply)
            #expect(BusJSON.handEncoded(reply) == data)
            #expect(
                try BusJSON.decodedWithoutHandCoder(AuditRecordBatch.Reply.self, from: data)
                    == BusJSON.handDecoded(AuditRecordBatch.Reply.self, from: data))
            let request = acceptTermsRequest(&r)
            let requestData = try BusJSON.encodedWithoutHandCoder(request)
            #expect(BusJSON.handEncoded(request) == requestData)
            #expect(try BusJSON.decodedWithoutHandCoder(AccountsAcceptTermsBatch.Request.self, from: requestData) == request)
            let page = consentPage(&r)
            let pageData = try BusJSON.encodedWithoutHandCoder(page)
            #expect(BusJSON.handEncoded(page) == pageData)
            #expect(try BusJSON.decodedWithoutHandCoder(AccountsConsentsSince.Reply.self, from: pageData) == page)
        }
    }
}
