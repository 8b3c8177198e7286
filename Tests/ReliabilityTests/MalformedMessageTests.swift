import Contracts
import Foundation
import TestSupport
import Testing

@testable import Bus

extension ReliabilityTests {
    /// Random and malformed bodies over a raw DEALER socket against each live service: the service
    /// keeps answering valid requests, and its resident memory stays flat (two identical storms:
    /// the second may not grow it by more than ``secondStormBound``).
    @Suite("Reliability: malformed messages")
    struct MalformedMessageTests {
        /// Garbage messages per storm.
        static let stormSize = 3_000
        /// How much the second storm may add to RSS: allocator noise and socket buffers on a loaded
        /// machine, not a leak (a leak of 1.5 KiB per message would add 4.4 MiB).
        static let secondStormBound = 4 << 20
        /// How much both storms together may add to RSS above the warmed-up service.
        static let totalBound = 24 << 20

        @Test(arguments: ["Legal", "Audit", "Accounts", "Documents"])
        func serviceSurvivesGarbageWithFlatMemory(service: String) async throws {
            try await Stack.run { stack in
                let process = try #require(stack.process(service))
                let pid = process.process.processIdentifier
                let raw = try await RawPeer.connect(stack.rpc[service]!, logger: testLogger())
                var generator = SplitMix64(seed: service.utf8.reduce(UInt64(17)) { $0 &* 31 &+ UInt64($1) })
                // Warm up: valid requests and one storm, so caches and pools have their working size.
                try await valid(service, raw)
                await storm(raw, &generator, count: 500)
                try await valid(service, raw)
                let baseline = try rss(pid)
                await storm(raw, &generator, count: Self.stormSize)
                try await valid(service, raw)
                let afterFirst = try rss(pid)
                await storm(raw, &generator, count: Self.stormSize)
                try await valid(service, raw)
                let afterSecond = try rss(pid)
                #expect(afterSecond - afterFirst <= Self.secondStormBound, "second storm grew RSS by \(afterSecond - afterFirst) bytes")
                #expect(afterSecond - baseline <= Self.totalBound, "storms grew RSS by \(afterSecond - baseline) bytes")
                #expect(process.process.isRunning)
                await raw.close()
                print(
                    "RELIABILITY malformed-\(service) messages=\(2 * Self.stormSize + 500) rss-baseline-kib=\(baseline >> 10) after-first-kib=\(afterFirst >> 10) after-second-kib=\(afterSecond >> 10)"
                )
            }
        }

        /// Sends `count` malformed messages, reading whatever error replies come back meanwhile.
        func storm(_ raw: RawPeer, _ generator: inout SplitMix64, count: Int) async {
            for index in 0..<count {
                raw.send(Self.garbage(index, &generator))
                if index % 100 == 99 { try? await Task.sleep(for: .milliseconds(5)) }
            }
        }

        /// One malformed message of one of several kinds, chosen by `index`.
        static func garbage(_ index: Int, _ generator: inout SplitMix64) -> [Data] {
            func random(_ count: Int) -> Data { Data((0..<count).map { _ in UInt8(truncatingIfNeeded: generator.next()) }) }
            let length = Int(generator.next() % 2048)
            switch index % 10 {
            case 0: return [random(length)]
            case 1: return [Data([0x00]) + random(length)]  // a container marker and noise
            case 2: return [Data([0x00, 0xFF, 0xFF, 0xFF, 0xFF]) + random(16)]  // a huge part count
            case 3: return [Data([0x00, 0, 0, 0, 2, 0x7F, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0, 0, 0, 0, 0, 0, 0, 1]) + random(8)]
            case 4: return [Data(), random(length), random(16)]  // old layout, garbage envelope
            case 5: return [Data(#"{"v":1,"id":"x","kind":"request","type":"#.utf8) + random(length)]  // a truncated envelope
            case 6: return [Data(String(repeating: "[", count: 50_000).utf8)]  // deep nesting
            case 7:
                let envelope = Envelope(kind: .request, type: "nosuch.method", payload: Data("{}".utf8))
                return Frames.dealer(EnvelopeCodec.encode(envelope), [])
            case 8:
                return [
                    Data(
                        #"{"v":1,"id":"6F9619FF-8B86-D011-B42D-00C04FC964FF","kind":"request","type":"legal.current","payload":{"type":[1,{}]}}"#.utf8
                    )
                ]
            default: return (0..<Int(generator.next() % 6)).map { _ in random(Int(generator.next() % 64)) }
            }
        }

        /// A valid request over the same raw socket, answered without an error (garbage replies that
        /// were still queued are skipped).
        func valid(_ service: String, _ raw: RawPeer) async throws {
            let (type, payload): (String, String) =
                switch service {
                case "Legal": ("legal.current", #"{"type":"terms_of_service"}"#)
                case "Audit": ("audit.public_key", "{}")
                case "Accounts": ("accounts.events.since", #"{"after":0,"limit":1}"#)
                default: ("documents.events.since", #"{"after":0,"limit":1}"#)
                }
            let envelope = Envelope(kind: .request, type: type, principal: .operator("tests"), payload: Data(payload.utf8))
            raw.send(Frames.dealer(EnvelopeCodec.encode(envelope), []))
            let end = ContinuousClock.now + .seconds(20)
            while ContinuousClock.now < end {
                let frames = try await raw.next(timeout: .seconds(20))
                guard let body = Frames.splitDealer(frames), let reply = try? EnvelopeCodec.decode(body.envelope),
                    reply.correlationId == envelope.id
                else { continue }
                #expect(reply.error == nil, "\(type): \(String(describing: reply.error))")
                return
            }
            throw TestSupportError("\(service) did not answer \(type) after garbage")
        }

        /// Resident set size of `pid` in bytes, from /proc.
        func rss(_ pid: Int32) throws -> Int {
            let status = try String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)
            guard let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmRSS:") }),
                let kib = Int(line.split(separator: " ", omittingEmptySubsequences: true)[1])
            else { throw TestSupportError("no VmRSS for \(pid)") }
            return kib << 10
        }
    }
}
