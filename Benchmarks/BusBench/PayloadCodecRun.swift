import BusCore
import Contracts
import Foundation

/// `bus-bench codecs`: the bus's payload codec (``BusJSON``: FastJSON, falling back to Foundation)
/// against the toolchain's Foundation `JSONEncoder`/`JSONDecoder` configured the same way
/// (`BusJSON.encoder()`/`decoder()`), on real payloads. Each figure is the median of the rounds, the
/// two codecs timed alternately within a round so that machine noise hits both alike; the ratio
/// (Foundation ÷ bus codec) is the figure to trust on a busy machine. The batch payloads have
/// hand-written coders (`HandCodedJSON`), which the bus codec runs first; the `generic` column is
/// the fast codec through `Codable` alone, what those payloads cost before.
enum PayloadCodecRun {
    static func run(rounds: Int) throws {
        print("bus-bench codecs: median of \(rounds) rounds, ns per operation; ratio = Foundation / bus codec")
        print("payload                                   bytes   fast   op       bus codec      generic    Foundation   ratio   generic/bus")
        try measure("accept_terms_batch request (\(PayloadSamples.batchItems))", PayloadSamples.acceptTermsBatchRequest, rounds: rounds)
        try measure("accept_terms_batch reply (\(PayloadSamples.batchItems))", PayloadSamples.acceptTermsBatchReply, rounds: rounds)
        try measure("audit.record_batch request (\(PayloadSamples.batchItems))", PayloadSamples.auditRecordBatchRequest, rounds: rounds)
        try measure("audit.record_batch reply (\(PayloadSamples.batchItems))", PayloadSamples.auditRecordBatchReply, rounds: rounds)
        try measure("accept_terms request (1)", PayloadSamples.acceptTermsBatchRequest.items[0].request, rounds: rounds)
        try measure("legal document reply (10 KB text)", PayloadSamples.legalDocument, rounds: rounds)
    }

    private static func measure<T: Codable & Equatable>(_ name: String, _ value: T, rounds: Int) throws {
        let foundationEncoder = BusJSON.encoder()
        let foundationDecoder = BusJSON.decoder()
        let data = try BusJSON.encode(value)
        let foundationData = try foundationEncoder.encode(value)
        // The comparison is fair only if both write the same bytes and read back the same value.
        guard data == foundationData, try BusJSON.decode(T.self, from: data) == value,
            try foundationDecoder.decode(T.self, from: data) == value
        else { throw BusError(.internal, "\(name): the codecs disagree") }
        let fast = BusJSON.fastPathHandles(value)
        // About 20 ms of work per timed block whatever the payload's size.
        let iterations = max(20, 2_000_000 / max(data.count, 100))
        func time(_ body: () throws -> Void) rethrows -> Double {
            let start = ContinuousClock.now
            for _ in 0..<iterations { try body() }
            return (ContinuousClock.now - start).inSeconds * 1e9 / Double(iterations)
        }
        var figures: [String: [Double]] = [:]
        for _ in 0..<rounds {
            figures["encode bus", default: []].append(try time { _ = try BusJSON.encode(value) })
            figures["encode generic", default: []].append(try time { _ = try BusJSON.encodedWithoutHandCoder(value) })
            figures["encode Foundation", default: []].append(try time { _ = try foundationEncoder.encode(value) })
            figures["decode bus", default: []].append(try time { _ = try BusJSON.decode(T.self, from: data) })
            figures["decode generic", default: []].append(try time { _ = try BusJSON.decodedWithoutHandCoder(T.self, from: data) })
            figures["decode Foundation", default: []].append(try time { _ = try foundationDecoder.decode(T.self, from: data) })
        }
        for op in ["encode", "decode"] {
            let bus = BusBench.median(figures["\(op) bus"] ?? [])
            let generic = BusBench.median(figures["\(op) generic"] ?? [])
            let foundation = BusBench.median(figures["\(op) Foundation"] ?? [])
            print(
                name.padding(toLength: 40, withPad: " ", startingAt: 0) + String(format: "%7d", data.count)
                    + "   " + (fast ? "yes " : "no  ") + "   " + op
                    + String(format: "   %10.0f   %10.0f   %11.0f   %5.2f   %5.2f", bus, generic, foundation, foundation / bus, generic / bus))
        }
    }
}
