import BusCore
import Contracts
import Foundation

/// `bus-bench codecs`: the bus's payload codec (``BusJSON``: FastJSON, falling back to Foundation)
/// against the toolchain's Foundation `JSONEncoder`/`JSONDecoder` configured the same way
/// (`BusJSON.encoder()`/`decoder()`), on real payloads. Each figure is the median of the rounds, the
/// two codecs timed alternately within a round so that machine noise hits both alike; the ratio
/// (Foundation ÷ bus codec) is the figure to trust on a busy machine. The batch payloads have
/// hand-written coders (`HandCodedJSON`), which the bus codec runs first; the `generic` column is
/// the fast codec through `Codable` alone, what those payloads cost before. The second table is
/// the generic path alone against Foundation on the payloads it serves (no hand-written coder:
/// legal documents, sessions, documents pages, events): the figures the 1.5× keep-or-delete rule
/// (ARCHITECTURE.md, "JSON") is applied to.
enum PayloadCodecRun {
    static func run(rounds: Int) throws {
        print("bus-bench codecs: median of \(rounds) rounds, ns per operation; ratio = Foundation / bus codec")
        print("payload                                   bytes   fast   op       bus codec      generic    Foundation   ratio   generic/bus")
        try measure("accept_terms_batch request (\(PayloadSamples.batchItems))", PayloadSamples.acceptTermsBatchRequest, rounds: rounds)
        try measure("accept_terms_batch reply (\(PayloadSamples.batchItems))", PayloadSamples.acceptTermsBatchReply, rounds: rounds)
        try measure("audit.record_batch request (\(PayloadSamples.batchItems))", PayloadSamples.auditRecordBatchRequest, rounds: rounds)
        try measure("audit.record_batch reply (\(PayloadSamples.batchItems))", PayloadSamples.auditRecordBatchReply, rounds: rounds)
        try measure("consents_since reply (\(PayloadSamples.batchItems))", PayloadSamples.consentsPage, rounds: rounds)
        try measure("accept_terms request (1)", PayloadSamples.acceptTermsBatchRequest.items[0].request, rounds: rounds)
        try measure("legal document reply (10 KB text)", PayloadSamples.legalDocument, rounds: rounds)
        print("")
        print("payloads with no hand-written coder: the generic fast path alone against Foundation")
        print("median of \(rounds) rounds, µs per operation; ratio = Foundation / generic; the last two columns: Foundation with")
        print("its default date strategy (dates as numbers, not the bytes the bus writes), a bound on what the custom one costs")
        print("payload                                   bytes   op          generic   Foundation   ratio   Foundation, plain dates   ratio")
        typealias Samples = GenericPayloadSamples
        try measureGeneric("legal.current reply (terms + outline)", Samples.termsDocument, rounds: rounds)
        try measureGeneric("legal.history reply (24 versions)", Samples.history, rounds: rounds)
        try measureGeneric("accounts.verify_session reply", Samples.verifyReply, rounds: rounds)
        try measureGeneric("accounts.refresh_session reply", Samples.sessionGrant, rounds: rounds)
        try measureGeneric("accounts.sign_in_with_apple reply", Samples.signInReply, rounds: rounds)
        try measureGeneric("documents.list reply (50 rows)", Samples.documentsPage50, rounds: rounds)
        try measureGeneric("documents.list reply (200 rows)", Samples.documentsPage200, rounds: rounds)
        try measureGeneric("legal.published event", Samples.legalPublished, rounds: rounds)
        try measureGeneric("account.deleted event", Samples.accountDeleted, rounds: rounds)
        try measureGeneric("session.revoked event", Samples.sessionRevoked, rounds: rounds)
        try measureGeneric("events.dead-letters reply (100)", Samples.deadLetters, rounds: rounds)
    }

    /// The generic path (FastJSON through `Codable`, no hand-written coder, no fallback) against
    /// Foundation's coders configured as the fallback is, timed alternately within each round.
    private static func measureGeneric<T: Codable & Equatable>(_ name: String, _ value: T, rounds: Int) throws {
        let foundationEncoder = BusJSON.encoder()
        let foundationDecoder = BusJSON.decoder()
        let data = try BusJSON.encodedWithoutHandCoder(value)
        guard data == (try foundationEncoder.encode(value)), try BusJSON.decodedWithoutHandCoder(T.self, from: data) == value,
            try foundationDecoder.decode(T.self, from: data) == value
        else { throw BusError(.internal, "\(name): the codecs disagree") }
        // Dates as Foundation writes them by default: what the payload would cost without the
        // custom date strategy (different bytes, so only a bound).
        let plainEncoder = JSONEncoder()
        plainEncoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let plainDecoder = JSONDecoder()
        let plainData = try plainEncoder.encode(value)
        guard try plainDecoder.decode(T.self, from: plainData) == value else { throw BusError(.internal, "\(name): plain dates differ") }
        let time = timer(bytes: data.count, perSecond: 1e6)
        var figures: [String: [Double]] = [:]
        for _ in 0..<rounds {
            figures["encode generic", default: []].append(try time { _ = try BusJSON.encodedWithoutHandCoder(value) })
            figures["encode Foundation", default: []].append(try time { _ = try foundationEncoder.encode(value) })
            figures["decode generic", default: []].append(try time { _ = try BusJSON.decodedWithoutHandCoder(T.self, from: data) })
            figures["decode Foundation", default: []].append(try time { _ = try foundationDecoder.decode(T.self, from: data) })
            figures["encode plain", default: []].append(try time { _ = try plainEncoder.encode(value) })
            figures["decode plain", default: []].append(try time { _ = try plainDecoder.decode(T.self, from: plainData) })
        }
        for op in ["encode", "decode"] {
            let plain = BusBench.median(figures["\(op) plain"] ?? [])
            let generic = BusBench.median(figures["\(op) generic"] ?? [])
            let foundation = BusBench.median(figures["\(op) Foundation"] ?? [])
            print(
                name.padding(toLength: 40, withPad: " ", startingAt: 0) + String(format: "%7d", data.count) + "   " + op
                    + String(
                        format: "   %10.2f   %10.2f   %5.2f   %23.2f   %5.2f", generic, foundation, foundation / generic, plain, plain / generic))
        }
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
        let time = timer(bytes: data.count, perSecond: 1e9)
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

    /// A timer for one payload: it runs a body enough times for about 20 ms of work whatever the
    /// payload's size and answers the time of one run in 1/`perSecond` s (1e6: µs, 1e9: ns).
    private static func timer(bytes: Int, perSecond: Double) -> (() throws -> Void) throws -> Double {
        let iterations = max(20, 2_000_000 / max(bytes, 100))
        return { body in
            let start = ContinuousClock.now
            for _ in 0..<iterations { try body() }
            return (ContinuousClock.now - start).inSeconds * perSecond / Double(iterations)
        }
    }
}
