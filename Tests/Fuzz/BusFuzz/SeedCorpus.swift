import BusCore
import Foundation

/// Seed inputs made by the real encoders, so the fuzzer starts from well-formed messages and
/// mutates towards the edges.
enum SeedCorpus {
    static func write(to folder: URL) throws {
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let payload = Data(
            #"{"id":"6F1B1C1E-2C53-4A53-9A27-3E1E8C1A0B11","kind":"accept","at":"2026-01-02T03:04:05.678Z","version":"2025-12-12","items":[{"name":"a","count":1},{"name":"é\n"}],"ratio":0.5,"flag":true}"#
                .utf8)
        var request = Envelope(
            kind: .request, type: "audit.record", traceparent: "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01",
            principal: .user("6F1B1C1E-2C53-4A53-9A27-3E1E8C1A0B11"), idempotencyKey: "key-1", payload: payload)
        request.deadline = Date(timeIntervalSince1970: 1_800_000_000)
        let reply = request.reply(payload: Data(#"{"ok":true}"#.utf8))
        let failure = request.reply(payload: nil, error: BusError(.invalidArgument, "version \"x\" is not published"))
        var event = Envelope(kind: .event, type: "legal.published", payload: Data("{}".utf8))
        event.sequence = 42
        let seeds: [(String, Data)] = [
            // The binary form every peer writes, and the JSON form still read from older peers.
            ("request.bin", EnvelopeCodec.encode(request)),
            ("reply.bin", EnvelopeCodec.encode(reply)),
            ("error.bin", EnvelopeCodec.encode(failure)),
            ("event.bin", EnvelopeCodec.encode(event)),
            ("request.json", EnvelopeCodec.encodeJSON(request)),
            ("reply.json", EnvelopeCodec.encodeJSON(reply)),
            ("error.json", EnvelopeCodec.encodeJSON(failure)),
            ("event.json", EnvelopeCodec.encodeJSON(event)),
            ("payload.json", payload),
            ("container.bin", Frames.pack(EnvelopeCodec.encode(request), [Data([0, 1, 2, 255]), Data()])),
            ("container-empty.bin", Frames.pack(EnvelopeCodec.encode(event), [])),
        ]
        for (name, data) in seeds { try data.write(to: folder.appendingPathComponent(name)) }
    }
}
