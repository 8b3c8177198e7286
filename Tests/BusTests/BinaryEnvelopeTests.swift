import Foundation
import Testing

@testable import Bus
@testable import BusCore

/// The binary envelope (``BinaryEnvelope``): what it writes, what it refuses, and that it says the
/// same as the JSON form it replaced, which is still read.
@Suite struct BinaryEnvelopeTests {
    static let full = Envelope(
        id: UUID(uuidString: "9c34cc29-1cc3-4a50-8ca4-b0e3b2377766")!, kind: .reply, type: "audit.record",
        correlationId: UUID(uuidString: "6a5c7e3f-8b7b-42ef-aa75-738a5d7d887a")!,
        sentAt: Date(timeIntervalSince1970: 1_790_000_000.123), deadline: Date(timeIntervalSince1970: 1_790_000_005.5),
        traceparent: "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
        principal: .operator("ops\u{00E9}"), idempotencyKey: "key-1", sequence: -42,
        payload: Data(#"{"a":[1,2,{"b":"c\"}"}],"ü":"✓"}"#.utf8),
        error: BusError(.conflict, "stale version", details: ["current": "2.0", "a": ""]))

    /// ``full`` in the JSON form, as peers wrote it before the binary form (nothing writes it now;
    /// stored dead letters may still hold it).
    static let fullAsJSON = #"""
        {"v":1,"id":"9c34cc29-1cc3-4a50-8ca4-b0e3b2377766","kind":"reply","type":"audit.record",\#
        "correlationId":"6a5c7e3f-8b7b-42ef-aa75-738a5d7d887a","sentAt":"2026-09-21T14:13:20.123Z",\#
        "deadline":"2026-09-21T14:13:25.500Z","traceparent":"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",\#
        "principal":{"kind":"operator","id":"opsé"},"idempotencyKey":"key-1","sequence":-42,\#
        "payload":{"a":[1,2,{"b":"c\"}"}],"ü":"✓"},\#
        "error":{"code":"conflict","details":{"a":"","current":"2.0"},"message":"stale version"}}
        """#

    @Test func writesTheMarkerAndReadsBackWhatTheJSONFormSays() throws {
        let binary = EnvelopeCodec.encode(Self.full)
        #expect(binary.first == BinaryEnvelope.marker)
        let fromBinary = try EnvelopeCodec.decode(binary)
        var fromJSON = try EnvelopeCodec.decode(Data(Self.fullAsJSON.utf8))
        // JSON carries milliseconds, binary the exact time.
        #expect(abs(fromJSON.sentAt.timeIntervalSince(fromBinary.sentAt)) < 0.001)
        #expect(abs(fromJSON.deadline!.timeIntervalSince(fromBinary.deadline!)) < 0.001)
        #expect(fromBinary.sentAt == Self.full.sentAt && fromBinary.deadline == Self.full.deadline)
        (fromJSON.sentAt, fromJSON.deadline) = (fromBinary.sentAt, fromBinary.deadline)
        #expect(fromBinary == fromJSON)
        #expect(fromBinary.error?.details == ["current": "2.0", "a": ""])
        #expect(fromBinary.sequence == -42)
        // Decoded once, an envelope is a fixed point: the same bytes again.
        #expect(EnvelopeCodec.encode(fromBinary) == binary)
    }

    @Test func keepsAbsentAndEmptyApart() throws {
        let bare = Envelope(kind: .event, type: "x")
        let decoded = try EnvelopeCodec.decode(EnvelopeCodec.encode(bare))
        #expect(decoded.payload == nil && decoded.error == nil && decoded.principal == nil && decoded.deadline == nil)
        var empty = bare
        empty.payload = Data()
        empty.idempotencyKey = ""
        empty.error = BusError(.internal, "", details: [:])
        let back = try EnvelopeCodec.decode(EnvelopeCodec.encode(empty))
        #expect(back.payload == Data() && back.idempotencyKey == "" && back.error?.details == [:])
    }

    /// Times outside what the JSON form can say are clamped when written (and refused when read):
    /// nothing downstream formats an out-of-range date.
    @Test func timesAreClampedToYearsOneTo9999() throws {
        var envelope = Envelope(kind: .event, type: "x", sentAt: Date(timeIntervalSince1970: 1e300))
        envelope.deadline = Date(timeIntervalSince1970: -.infinity)
        let decoded = try EnvelopeCodec.decode(EnvelopeCodec.encode(envelope))
        #expect(decoded.sentAt.timeIntervalSince1970 == BinaryEnvelope.latest)
        #expect(decoded.deadline?.timeIntervalSince1970 == BinaryEnvelope.earliest)
        #expect(Timestamp.format(decoded.sentAt) == "9999-12-31T23:59:59.999Z")
    }

    @Test func equalErrorsAreEqualBytes() {
        var first: [String: String] = [:]
        var second: [String: String] = [:]
        let keys = (0..<40).map { "k\($0)" }
        for key in keys { first[key] = key }
        for key in keys.reversed() { second[key] = key }
        #expect(
            BinaryEnvelope.writeError(BusError(.gone, "m", details: first))
                == BinaryEnvelope.writeError(BusError(.gone, "m", details: second)))
    }

    /// Hand-built bytes: fields this build does not know are skipped, a newer version still
    /// decodes (so the server can answer it), and a later field of the same tag wins as a later
    /// JSON member did.
    @Test func skipsUnknownFieldsAndReadsNewerVersions() throws {
        let id = UUID()
        var bytes = header(v: 7, kind: 1, id: id, type: "legal.current")
        bytes += field(200, [1, 2, 3])
        bytes += field(BinaryEnvelope.Tag.idempotencyKey.rawValue, Array("first".utf8))
        bytes += field(0, [])
        bytes += field(BinaryEnvelope.Tag.idempotencyKey.rawValue, Array("second".utf8))
        bytes += field(BinaryEnvelope.Tag.payload.rawValue, Array("{}".utf8))
        let decoded = try EnvelopeCodec.decode(Data(bytes))
        #expect(decoded.v == 7 && decoded.id == id && decoded.kind == .request && decoded.type == "legal.current")
        #expect(decoded.idempotencyKey == "second")
        #expect(decoded.payload == Data("{}".utf8))
    }

    @Test(
        arguments: [
            ("kind 0", header(kind: 0)), ("kind 4", header(kind: 4)), ("empty type", header(type: "")),
            ("bad UTF-8 type", header(typeBytes: [0x61, 0xFF])),
            ("short correlationId", header() + field(BinaryEnvelope.Tag.correlationId.rawValue, [1, 2, 3])),
            ("long deadline", header() + field(BinaryEnvelope.Tag.deadline.rawValue, Array(repeating: 0, count: 9))),
            ("short sequence", header() + field(BinaryEnvelope.Tag.sequence.rawValue, [0])),
            ("unknown principal kind", header() + field(BinaryEnvelope.Tag.principal.rawValue, [9] + Array("x".utf8))),
            ("principal without kind", header() + field(BinaryEnvelope.Tag.principal.rawValue, [])),
            ("bad UTF-8 principal", header() + field(BinaryEnvelope.Tag.principal.rawValue, [0, 0xC0])),
            ("bad UTF-8 key", header() + field(BinaryEnvelope.Tag.idempotencyKey.rawValue, [0xFE])),
            ("field past the end", header() + [BinaryEnvelope.Tag.payload.rawValue, 0, 0, 0, 9, 1]),
            ("half a field header", header() + [BinaryEnvelope.Tag.payload.rawValue, 0]),
            ("type past the end", Array(header(type: "abc").dropLast())),
            ("sentAt not a number", header(sentAt: .nan)), ("sentAt infinite", header(sentAt: -.infinity)),
            ("sentAt past year 9999", header(sentAt: 253_402_300_800)), ("sentAt before year 1", header(sentAt: -62_135_596_801)),
            (
                "deadline far out",
                header() + field(BinaryEnvelope.Tag.deadline.rawValue, withUnsafeBytes(of: (1e300).bitPattern.bigEndian, Array.init))
            ),
        ] as [(String, [UInt8])])
    func refusesMalformedWithInvalidArgument(_ name: String, _ bytes: [UInt8]) {
        do {
            _ = try EnvelopeCodec.decode(Data(bytes))
            Issue.record("\(name) decoded")
        } catch {
            #expect(error.code == .invalidArgument, "\(name)")
            #expect(!error.message.isEmpty)
        }
    }

    /// Every prefix of a real envelope is refused with `invalid_argument`, never a crash.
    @Test func everyTruncationIsRefused() {
        let bytes = [UInt8](EnvelopeCodec.encode(Self.full))
        var decodedPrefixes = 0
        for length in 0..<bytes.count {
            do {
                _ = try EnvelopeCodec.decode(Data(bytes.prefix(length)))
                decodedPrefixes += 1  // possible only where a field ends: an envelope with fewer fields
            } catch {
                #expect(error.code == .invalidArgument)
            }
        }
        #expect(decodedPrefixes < 10)
    }

    @Test func anUnreadableErrorIsInternalAndAnUnknownCodeToo() throws {
        let garbled = try EnvelopeCodec.decode(Data(header() + field(BinaryEnvelope.Tag.error.rawValue, [0, 0, 0, 9, 1])))
        #expect(garbled.error?.code == .internal)
        #expect(garbled.error?.message == "unreadable error from peer")
        var error = BinaryEnvelope.writeError(BusError(.gone, "later"))
        error.replaceSubrange(4..<8, with: Array("soon".utf8))  // "gone" -> "soon"
        let unknown = try EnvelopeCodec.decode(Data(header() + field(BinaryEnvelope.Tag.error.rawValue, error)))
        #expect(unknown.error == BusError(.internal, "later"))
    }

    @Test func containerBytesMatchTheDataForm() throws {
        let envelope = [UInt8](EnvelopeCodec.encode(Self.full))
        let attachments = [Data([1, 2, 3]), Data(), Data(count: 70_000)]
        #expect(Data(Frames.packBytes(envelope, attachments)) == Frames.pack(Data(envelope), attachments))
        #expect(Frames.packBytes(envelope, []) == envelope)
        // Bytes that start like a container travel in one, so that unpacking gives them back.
        let odd = Data([0, 0, 0, 0, 1, 9])
        #expect(try Frames.unpack(Frames.pack(odd, [])).get().envelope == odd)
        #expect(Data(Frames.packBytes([UInt8](odd), [])) == Frames.pack(odd, []))
    }

    /// The splits that read a message in place give the same answers as the `[Data]` ones.
    @Test func inPlaceSplitsAgreeWithCopies() throws {
        let envelope = EnvelopeCodec.encode(Self.full)
        let attachments = [Data([1, 2, 3]), Data(), Data(count: 1000)]
        let id = Data("peer".utf8)
        let cases: [[Data]] = [
            [id, envelope], [id, Frames.pack(envelope, attachments)], [id, Data("x".utf8), envelope],
            [id, Data(), envelope, Data([4])], [id, Data()], [Data(), envelope], [id], [],
            [id, Data([0, 0, 0, 0, 1])], [Frames.pack(envelope, attachments)], [envelope],
        ]
        for frames in cases {
            let received = ReceivedFrames(frames: frames)
            #expect(received.frames == frames)
            switch (Frames.splitRouted(frames), Frames.splitRouted(received)) {
            case (.success(let copied), .success(let view)):
                #expect(copied.route == view.route && copied.attachments == view.attachments)
                #expect(copied.envelope == Data(view.envelope))
            case (.failure(let copied), .failure(let view)):
                #expect(copied == view)
            default:
                Issue.record("splitRouted disagrees on \(frames.map(\.count))")
            }
            let copied = Frames.splitDealer(frames)
            let view = Frames.splitDealer(received)
            #expect(copied?.envelope == view.map { Data($0.envelope) })
            #expect(copied?.attachments == view?.attachments)
        }
    }
}

// MARK: Hand-built envelopes

private func header(
    v: Int64 = 1, kind: UInt8 = 1, id: UUID = UUID(), type: String = "t", typeBytes: [UInt8]? = nil,
    sentAt: Double = 1_790_000_000.25
) -> [UInt8] {
    let type = typeBytes ?? Array(type.utf8)
    var bytes: [UInt8] = [BinaryEnvelope.marker]
    bytes += withUnsafeBytes(of: v.bigEndian, Array.init)
    bytes.append(kind)
    bytes += withUnsafeBytes(of: id.uuid, Array.init)
    bytes += withUnsafeBytes(of: sentAt.bitPattern.bigEndian, Array.init)
    bytes += withUnsafeBytes(of: UInt32(type.count).bigEndian, Array.init)
    return bytes + type
}

private func field(_ tag: UInt8, _ value: [UInt8]) -> [UInt8] {
    [tag] + withUnsafeBytes(of: UInt32(value.count).bigEndian, Array.init) + value
}
