import Foundation
import Testing

@testable import Bus
@testable import BusCore

@Suite struct EnvelopeCodecTests {
    @Test func roundTripsEveryField() throws {
        let envelope = Envelope(
            kind: .request, type: "audit.record", correlationId: UUID(),
            sentAt: Date(timeIntervalSince1970: 1_790_000_000.123), deadline: Date(timeIntervalSince1970: 1_790_000_005.5),
            traceparent: "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
            principal: .user("8d1c\"quoted\"\\slash\n"), idempotencyKey: "key-1", sequence: 42,
            payload: Data(#"{"a":[1,2,{"b":"c\"}"}],"ü":"✓"}"#.utf8),
            error: BusError(.conflict, "stale version", details: ["current": "2.0"]))
        let decoded = try EnvelopeCodec.decode(EnvelopeCodec.encode(envelope))
        #expect(decoded.id == envelope.id)
        #expect(decoded.kind == .request)
        #expect(decoded.type == "audit.record")
        #expect(decoded.correlationId == envelope.correlationId)
        #expect(abs(decoded.sentAt.timeIntervalSince(envelope.sentAt)) < 0.001)
        #expect(abs(decoded.deadline!.timeIntervalSince(envelope.deadline!)) < 0.001)
        #expect(decoded.traceparent == envelope.traceparent)
        #expect(decoded.principal == envelope.principal)
        #expect(decoded.idempotencyKey == "key-1")
        #expect(decoded.sequence == 42)
        #expect(decoded.payload == envelope.payload)
        #expect(decoded.error == envelope.error)
    }

    @Test func ignoresUnknownMembersAndReadsNewerVersions() throws {
        let id = UUID()
        let json = #"{"future":{"x":[true,null]},"v":2,"id":"\#(id)","kind":"request","type":"legal.current","extra":1.5e3}"#
        let decoded = try EnvelopeCodec.decode(Data(json.utf8))
        #expect(decoded.v == 2)
        #expect(decoded.id == id)
        #expect(decoded.payload == nil)
    }

    @Test(arguments: [
        "", "not json", "[]", "{", #"{"v":1}"#, #"{"v":1,"id":"nope","kind":"request","type":"x"}"#,
        #"{"v":1,"id":"6F9619FF-8B86-D011-B42D-00C04FC964FF","kind":"shout","type":"x"}"#,
        #"{"v":1,"id":"6F9619FF-8B86-D011-B42D-00C04FC964FF","kind":"request","type":""}"#,
        #"{"v":1,"id":"6F9619FF-8B86-D011-B42D-00C04FC964FF","kind":"request","type":"x","deadline":"yesterday"}"#,
        #"{"v":1,"id":"6F9619FF-8B86-D011-B42D-00C04FC964FF","kind":"request","type":"x"} trailing"#,
        "{\"v\":1,\"type\":\"\u{01}\"}",
        #"{"v":1,"id":"6F9619FF-8B86-D011-B42D-00C04FC964FF","kind":"request","type":"\u+041"}"#,
    ])
    func rejectsMalformedEnvelopesWithInvalidArgument(_ text: String) {
        #expect(throws: BusError.self) { try EnvelopeCodec.decode(Data(text.utf8)) }
        do {
            _ = try EnvelopeCodec.decode(Data(text.utf8))
        } catch {
            #expect(error.code == .invalidArgument)
            #expect(!error.message.isEmpty)
        }
    }

    @Test func rejectsInvalidUTF8() {
        var bytes = Array(#"{"v":1,"id":"6F9619FF-8B86-D011-B42D-00C04FC964FF","kind":"request","type":""#.utf8)
        bytes += [0xFF, 0xFE, UInt8(ascii: "\""), UInt8(ascii: "}")]
        #expect(throws: BusError.self) { try EnvelopeCodec.decode(Data(bytes)) }
    }

    @Test func decodesEscapesAndSurrogatePairs() throws {
        let json = #"{"v":1,"id":"6F9619FF-8B86-D011-B42D-00C04FC964FF","kind":"event","type":"a\u00e9\ud83d\ude00\t\/"}"#
        #expect(try EnvelopeCodec.decode(Data(json.utf8)).type == "aé😀\t/")
    }

    @Test func payloadDecodingNamesTheBadField() throws {
        struct Shape: Codable { var count: Int }
        let envelope = Envelope(kind: .request, type: "t", payload: Data(#"{"count":"three"}"#.utf8))
        do {
            _ = try envelope.decodePayload(Shape.self)
            Issue.record("decoding should fail")
        } catch {
            #expect(error.code == .invalidArgument)
            #expect(error.message.contains("count"))
        }
    }

    @Test func timestampsRoundTripWithMilliseconds() {
        let date = Date(timeIntervalSince1970: 1_700_000_000.789)
        let text = Timestamp.format(date)
        #expect(text == "2023-11-14T22:13:20.789Z")
        #expect(Timestamp.parse(text)!.timeIntervalSince1970 == 1_700_000_000.789)
        #expect(Timestamp.parse("2023-11-14T23:13:20.5+01:00")!.timeIntervalSince1970 == 1_700_000_000.5)
        #expect(Timestamp.parse("2023-13-14T23:13:20Z") == nil)
        #expect(Timestamp.parse("2023-11-14 23:13:20Z") == nil)
        #expect(Timestamp.format(Date(timeIntervalSince1970: -0.5)) == "1969-12-31T23:59:59.500Z")
    }

    /// The decoder matches keys on their bytes and reads integers by hand: escaped keys, the
    /// integer limits and ids in either case must still come out as before.
    @Test func matchesEscapedKeysAndReadsIntegerLimits() throws {
        let id = "6F9619FF-8B86-D011-B42D-00C04FC964FF"
        let escaped = #"{"\u0076":1,"i\u0064":"\#(id)","kind":"event","type":"x","sequence":-9223372036854775808}"#
        let decoded = try EnvelopeCodec.decode(Data(escaped.utf8))
        #expect(decoded.v == 1)
        #expect(decoded.id == UUID(uuidString: id))
        #expect(decoded.sequence == Int64.min)
        let big = #"{"v":1,"id":"\#(id)","kind":"event","type":"x","sequence":9223372036854775807}"#
        #expect(try EnvelopeCodec.decode(Data(big.utf8)).sequence == Int64.max)
        for bad in ["9223372036854775808", "1.5", "-", "\"1\""] {
            let json = #"{"v":1,"id":"\#(id)","kind":"event","type":"x","sequence":\#(bad)}"#
            #expect(throws: BusError.self) { try EnvelopeCodec.decode(Data(json.utf8)) }
        }
        #expect(MessageID.parse(Array(id.lowercased().utf8)[...]) == UUID(uuidString: id))
        #expect(MessageID.parse(id) == UUID(uuidString: id))
        #expect(MessageID.parse("/\(id.lowercased())/".dropFirst().dropLast()) == UUID(uuidString: id))
        for bad in [String(id.dropLast()), id + "0", id.replacingOccurrences(of: "-", with: "_"), "G" + id.dropFirst(), ""] {
            #expect(MessageID.parse(bad) == nil, "\(bad)")
        }
        #expect(MessageID.make() != MessageID.make())
    }

    /// The calendar arithmetic that replaced `gmtime_r`/`timegm` agrees with them.
    @Test func calendarArithmeticMatchesLibc() {
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<20_000 {
            var seconds = time_t(Int64.random(in: -62_135_596_800...253_402_300_799, using: &generator))
            var expected = tm()
            gmtime_r(&seconds, &expected)
            let parts = Timestamp.civil(Int64(seconds))
            #expect(parts.tm_year == expected.tm_year && parts.tm_mon == expected.tm_mon && parts.tm_mday == expected.tm_mday)
            #expect(parts.tm_hour == expected.tm_hour && parts.tm_min == expected.tm_min && parts.tm_sec == expected.tm_sec)
            var fields = expected
            fields.tm_mday += 3  // overflowing days normalise the same way
            let days = Timestamp.days(year: Int64(fields.tm_year) + 1900, month: Int64(fields.tm_mon) + 1, day: Int64(fields.tm_mday))
            let viaArithmetic = days * 86400 + Int64(fields.tm_hour) * 3600 + Int64(fields.tm_min) * 60 + Int64(fields.tm_sec)
            #expect(viaArithmetic == Int64(timegm(&fields)))
        }
    }

    @Test func oneBodyFrameCarriesTheEnvelopeAndAttachments() throws {
        let envelope = Data("{}".utf8)
        let attachments = [Data([1, 2, 3]), Data(), Data(count: 70_000)]
        #expect(Frames.dealer(envelope, []) == [envelope])  // no attachments: the JSON as it is
        let sent = Frames.dealer(envelope, attachments)
        #expect(sent.count == 1)
        let routed = try Frames.splitRouted([Data("id".utf8)] + sent).get()
        #expect(routed.route == [Data("id".utf8)])
        #expect(routed.envelope == envelope && routed.attachments == attachments)
        let back = try #require(Frames.splitDealer(Frames.routed([Data("id".utf8)], envelope, attachments).dropFirst().map { $0 }))
        #expect(back.envelope == envelope && back.attachments == attachments)
        let event = Frames.event(topic: "legal.published", envelope, attachments)
        #expect(event.count == 1 && event[0].starts(with: Data("legal.published".utf8)))
        let received = try #require(Frames.splitEvent(event))
        #expect(received.envelope == envelope && received.attachments == attachments)
    }

    @Test func malformedBodiesAreRefused() {
        #expect(throws: Frames.Malformed.missingDelimiter) { try Frames.splitRouted([Data("id".utf8)]).get() }
        #expect(throws: Frames.Malformed.missingEnvelope) { try Frames.splitRouted([Data("id".utf8), Data()]).get() }
        for bad in [Data([0]), Data([0, 0, 0, 0, 0]), Data([0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 5, 1]), Data([0, 0xFF, 0xFF, 0xFF, 0xFF])] {
            #expect(throws: Frames.Malformed.badContainer) { try Frames.splitRouted([Data("id".utf8), bad]).get() }
        }
        #expect(Frames.splitEvent([Data("no separator".utf8)]) == nil)
    }

    @Test func theOldLayoutIsStillUnderstood() throws {
        let frames = [Data("id".utf8), Data(), Data("{}".utf8), Data([1, 2, 3])]
        let routed = try Frames.splitRouted(frames).get()
        #expect(routed.route == [Data("id".utf8)])
        #expect(routed.envelope == Data("{}".utf8))
        #expect(routed.attachments == [Data([1, 2, 3])])
        #expect(Frames.splitDealer([Data(), Data("{}".utf8), Data([4])])?.attachments == [Data([4])])
        #expect(Frames.splitEvent([Data("t".utf8), Data("{}".utf8)])?.envelope == Data("{}".utf8))
    }

    @Test func errorCodesMapToHTTPStatuses() {
        #expect(ErrorCode.restrictedState.httpStatus == 403)
        #expect(ErrorCode.gone.httpStatus == 410)
        #expect(ErrorCode.deadlineExceeded.httpStatus == 504)
        #expect(Set(ErrorCode.allCases.map(\.httpStatus)).count == 12)
    }
}
