import Foundation
import TestSupport
import Testing

@testable import Bus
@testable import BusCore

/// Garbage on the wire gets an error reply where one can be routed, and never crashes or wedges
/// the server: it answers the next valid request.
@Suite struct HostileInputTests {
    let logger = testLogger()

    private func validRequest(_ number: Int) throws -> [Data] {
        let envelope = Envelope(kind: .request, type: TestEcho.type, payload: try BusJSON.encode(EchoRequest(number: number)))
        return Frames.dealer(EnvelopeCodec.encode(envelope), [])
    }

    /// The envelope of a raw reply (one body frame).
    private func replyEnvelope(_ frames: [Data]) throws -> Envelope {
        let body = try #require(Frames.splitDealer(frames), "reply frames \(frames.map(\.count))")
        return try EnvelopeCodec.decode(body.envelope)
    }

    @Test func garbageFramesGetErrorRepliesAndServerStaysUp() async throws {
        let server = RPCServer(name: "test", endpoints: ["tcp://127.0.0.1:*"], logger: logger)
        registerTestHandlers(on: server)
        try await server.start()
        let raw = try await RawPeer.connect(server.boundEndpoints[0], logger: testLogger())

        let garbage: [[Data]] = [
            [Data("no delimiter".utf8)],
            [Data()],
            [Data(), Data([0xFF, 0x00, 0x13])],
            [Data(), Data("{\"v\":1".utf8)],
            [Data(), Data("[1,2,3]".utf8)],
            [Data(), Data(String(repeating: "[", count: 10_000).utf8)],
            [Data(), Data(#"{"v":1,"id":"6F9619FF-8B86-D011-B42D-00C04FC964FF","kind":"reply","type":"test.echo"}"#.utf8)],
            [Data([0x00, 0xFF, 0xFF])],  // a container with impossible lengths
            [Data([0x00, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 9, 0x7B])],  // a part longer than the frame
        ]
        for frames in garbage {
            let reply = try await raw.roundTrip(frames)
            #expect(reply.count == 1)
            let envelope = try replyEnvelope(reply)
            #expect(envelope.kind == .reply)
            #expect(envelope.error?.code == .invalidArgument, "for \(frames.map(\.count))")
        }
        let reply = try replyEnvelope(try await raw.roundTrip(try validRequest(42)))
        #expect(try reply.decodePayload(EchoReply.self).number == 42)
        // A peer still on the old layout ([empty][envelope]) is understood.
        let old = Envelope(kind: .request, type: TestEcho.type, payload: try BusJSON.encode(EchoRequest(number: 7)))
        let oldReply = try replyEnvelope(try await raw.roundTrip([Data(), EnvelopeCodec.encode(old)]))
        #expect(try oldReply.decodePayload(EchoReply.self).number == 7)
        await raw.close()
        await server.shutdown()
    }

    @Test func oversizedMessageDropsOnlyThatPeer() async throws {
        var options = RPCServerOptions()
        options.maxMessageSize = 1 << 20
        let server = RPCServer(name: "test", endpoints: ["tcp://127.0.0.1:*"], options: options, logger: logger)
        registerTestHandlers(on: server)
        try await server.start()

        let hog = try await RawPeer.connect(server.boundEndpoints[0], logger: testLogger())
        hog.send([Data(), Data(count: 4 << 20)])
        try await Task.sleep(for: .milliseconds(300))

        let client = try await RPCClient.connect(to: "test", endpoints: server.boundEndpoints, logger: logger)
        #expect(try await client.call(TestEcho.self, EchoRequest(number: 9)).number == 9)
        await client.close()
        await hog.close()
        await server.shutdown()
    }
}
