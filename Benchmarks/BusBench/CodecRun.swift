import Bus
import BusCore
import Foundation

/// `bus-bench --only codec`: the single-thread cost of each coding step of one call, in ns, as the
/// best of several rounds (the minimum is the figure least disturbed by a noisy machine).
enum CodecRun {
    static func run(rounds: Int) throws {
        let request = EnvelopeRPCRun.request
        let payload = try BusJSON.encode(request)
        let envelope = Envelope(
            kind: .request, type: BenchEcho.type, deadline: Date(), principal: .user(request.user), payload: payload)
        let wire = EnvelopeCodec.encode(envelope)
        let steps: [(String, () throws -> Void)] = [
            ("payload encode (BusJSON)", { _ = try BusJSON.encode(request) }),
            ("payload encode (Foundation)", { _ = try BusJSON.encoder().encode(request) }),
            ("payload decode (BusJSON)", { _ = try BusJSON.decode(BenchRequest.self, from: payload) }),
            ("payload decode (Foundation)", { _ = try BusJSON.decoder().decode(BenchRequest.self, from: payload) }),
            ("envelope encode", { _ = EnvelopeCodec.encode(envelope) }),
            ("envelope decode", { _ = try EnvelopeCodec.decode(wire) }),
            ("message id", { _ = MessageID.make() }),
            // Every coding step of one call, in order, on one thread, as RPCClient and RPCServer
            // do them (payloads as byte arrays, envelopes decoded from the frame's bytes): the
            // floor under a call's CPU that threads and sockets add to.
            (
                "whole call, coding only",
                {
                    let header = Envelope(
                        kind: .request, type: BenchEcho.type, deadline: Date(), principal: .user(EnvelopeRPCRun.request.user))
                    let body = EnvelopeCodec.encodeBytes(header, payload: try BusJSON.encodeBytes(EnvelopeRPCRun.request))
                    let received = try body.withUnsafeBytes { bytes in try EnvelopeCodec.decode(bytes) }
                    let echoed = try received.decodePayload(BenchRequest.self)
                    let reply = Envelope(kind: .reply, type: received.type, correlationId: received.id)
                    let replyBody = EnvelopeCodec.encodeBytes(reply, payload: try BusJSON.encodeBytes(echoed))
                    _ = try replyBody.withUnsafeBytes { bytes in try EnvelopeCodec.decode(bytes) }.decodePayload(BenchRequest.self)
                }
            ),
        ]
        print("codec step                         ns/op (best of \(rounds))")
        for (name, step) in steps {
            var best = Double.infinity
            for _ in 0..<rounds {
                let iterations = 20_000
                let start = ContinuousClock.now
                for _ in 0..<iterations { try step() }
                best = min(best, (ContinuousClock.now - start).inSeconds * 1e9 / Double(iterations))
            }
            print(name.padding(toLength: 35, withPad: " ", startingAt: 0) + String(format: "%8.0f", best))
        }
    }
}
