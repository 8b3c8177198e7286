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
            // The binary form every peer writes, and the JSON form still read (stored dead letters).
            ("request.bin", EnvelopeCodec.encode(request)),
            ("reply.bin", EnvelopeCodec.encode(reply)),
            ("error.bin", EnvelopeCodec.encode(failure)),
            ("event.bin", EnvelopeCodec.encode(event)),
            ("request.json", Data(LegacyJSONSeeds.request.utf8)),
            ("reply.json", Data(LegacyJSONSeeds.reply.utf8)),
            ("error.json", Data(LegacyJSONSeeds.error.utf8)),
            ("event.json", Data(LegacyJSONSeeds.event.utf8)),
            ("payload.json", payload),
            ("container.bin", Frames.pack(EnvelopeCodec.encode(request), [Data([0, 1, 2, 255]), Data()])),
            ("container-empty.bin", Frames.pack(EnvelopeCodec.encode(event), [])),
        ]
        for (name, data) in seeds { try data.write(to: folder.appendingPathComponent(name)) }
    }
}

/// The same request, reply, error and event in the JSON form peers wrote before the binary one.
/// Nothing writes that form any more, so these are its bytes as the last writer left them.
enum LegacyJSONSeeds {
    static let request = #"""
        {"v":1,"id":"6a5c7e3f-8b7b-42ef-aa75-738a5d7d887a","kind":"request","type":"audit.record",\#
        "sentAt":"2026-11-25T07:58:53.289Z","deadline":"2027-01-15T08:00:00.000Z",\#
        "traceparent":"00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01","principal":{"kind":"user",\#
        "id":"6F1B1C1E-2C53-4A53-9A27-3E1E8C1A0B11"},"idempotencyKey":"key-1",\#
        "payload":{"id":"6F1B1C1E-2C53-4A53-9A27-3E1E8C1A0B11","kind":"accept",\#
        "at":"2026-01-02T03:04:05.678Z","version":"2025-12-12","items":[{"name":"a",\#
        "count":1},{"name":"é\n"}],"ratio":0.5,"flag":true}}
        """#
    static let reply = #"""
        {"v":1,"id":"da9bcec5-bcfc-420d-91f8-8c7be5ffd2b6","kind":"reply","type":"audit.record",\#
        "correlationId":"6a5c7e3f-8b7b-42ef-aa75-738a5d7d887a","sentAt":"2026-11-25T07:58:53.289Z",\#
        "traceparent":"00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01","idempotencyKey":"key-1",\#
        "payload":{"ok":true}}
        """#
    static let error = #"""
        {"v":1,"id":"9c34cc29-1cc3-4a50-8ca4-b0e3b2377766","kind":"reply","type":"audit.record",\#
        "correlationId":"6a5c7e3f-8b7b-42ef-aa75-738a5d7d887a","sentAt":"2026-11-25T07:58:53.289Z",\#
        "traceparent":"00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01","idempotencyKey":"key-1",\#
        "error":{"code":"invalid_argument","message":"version \"x\" is not published"}}
        """#
    static let event = #"""
        {"v":1,"id":"887d275f-2af9-4f54-bbad-e14bbdb29cd0","kind":"event","type":"legal.published",\#
        "sentAt":"2026-11-25T07:58:53.289Z","sequence":42,"payload":{}}
        """#
}
