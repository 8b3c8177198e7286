import Foundation
import TestSupport
import Testing

@testable import Bus
@testable import BusCore

/// The fast payload encoder must write exactly Foundation's bytes, and fall back (with the same
/// result through ``BusJSON/encode(_:)``) for whatever it does not reproduce.
@Suite struct FastJSONEncoderTests {
    /// Checks `value`: Foundation's bytes (or failure) are what `BusJSON.encode` gives; when
    /// `fast`, the fast encoder must have produced them itself, without falling back.
    static func expectSame<T: Encodable>(_ value: T, fast: Bool = true, sourceLocation: SourceLocation = #_sourceLocation) {
        let foundation = try? BusJSON.encoder().encode(value)
        let ours = try? FastJSONEncoder.encode(value)
        let bus = try? BusJSON.encode(value)
        #expect(bus == foundation, "BusJSON.encode differs for \(T.self)", sourceLocation: sourceLocation)
        if fast {
            #expect(ours != nil, "fast encoder fell back on \(T.self)", sourceLocation: sourceLocation)
        }
        if let ours, ours != foundation {
            Issue.record(
                "\(T.self): fast \(String(decoding: ours, as: UTF8.self)) != Foundation \(foundation.map { String(decoding: $0, as: UTF8.self) } ?? "error")",
                sourceLocation: sourceLocation)
        }
    }

    enum Color: String, Codable {
        case red
        case lightBlue = "light_blue"
    }
    enum Level: Int, Codable {
        case low = 1
        case high = 10
    }
    enum Shape: Codable {
        case circle(radius: Double)
        case rect(Int, Int)
        case none
    }
    struct Inner: Codable {
        var name: String
        var tags: [String]
        var scores: [String: Int]?
    }
    struct Everything: Codable {
        var id: UUID
        var at: Date
        var int: Int, int8: Int8, int16: Int16, int32: Int32, int64: Int64
        var uint: UInt, uint8: UInt8, uint16: UInt16, uint32: UInt32, uint64: UInt64
        var double: Double
        var float: Float
        var flag: Bool
        var note: String?
        var missing: String?
        var inner: [Inner]
        var nested: [[Int?]]
        var byNumber: [Int: String]
        var color: Color
        var level: Level?
        var shapes: [Shape]
        var blob: Data
        var link: URL
        var dates: [Date]
        var ids: Set<UUID>
    }

    static let everything = Everything(
        id: UUID(uuidString: "6f9619ff-8b86-d011-b42d-00c04fc964ff")!, at: Date(timeIntervalSince1970: 1_795_000_000.123),
        int: .min, int8: .min, int16: .max, int32: -7, int64: .max, uint: .max, uint8: 255, uint16: 0, uint32: 42,
        uint64: .max, double: 1.0, float: 0.1, flag: false, note: "tab\there / \"quoted\" é😀", missing: nil,
        inner: [Inner(name: "ü", tags: [], scores: ["b": -2, "a": 1, "B": 3, "aa": 0]), Inner(name: "", tags: ["p", "q"], scores: nil)],
        nested: [[1, nil, 3], [], [nil]], byNumber: [10: "ten", 2: "two", -1: "minus"], color: .lightBlue, level: .high,
        shapes: [.circle(radius: 2.5), .rect(3, 4), .none], blob: Data([0, 1, 2, 250, 251, 252, 253, 254, 255]),
        link: URL(string: "https://example.com/a/b?q=1&r=ü#frag")!,
        dates: [Date(timeIntervalSince1970: 0), Date(timeIntervalSince1970: -1.5), Date(timeIntervalSince1970: 4_102_444_800)],
        ids: [UUID(), UUID()])

    @Test func encodesEveryKindOfMemberLikeFoundation() {
        Self.expectSame(Self.everything)
        Self.expectSame(BusError(.notFound, "no \"such\" thing\n", details: ["z": "1", "a": "/path"]))
        Self.expectSame(Empty())
        Self.expectSame([Self.everything, Self.everything])
    }

    @Test func encodesTopLevelFragmentsLikeFoundation() {
        Self.expectSame("text")
        Self.expectSame(42)
        Self.expectSame(-0.0)
        Self.expectSame(true)
        Self.expectSame(Optional<Int>.none)
        Self.expectSame([1, 2, 3])
        Self.expectSame(["b": 1, "a": 2])
        Self.expectSame(Date(timeIntervalSince1970: 1_000_000_000.5))
        Self.expectSame(UUID())
        Self.expectSame(Data("hello?>".utf8))
        Self.expectSame(URL(string: "file:///tmp/x y")!)
        Self.expectSame(Color.red)
    }

    @Test func escapesStringsLikeFoundation() {
        var text = ""
        for scalar in 0..<0x80 { text.unicodeScalars.append(Unicode.Scalar(UInt8(scalar))) }
        Self.expectSame(text)
        for sample in [
            "", "\"", "\\", "/", "\u{7F}", "\u{2028}\u{2029}", "e\u{301}", "é", "😀👨‍👩‍👧", "\0", "a\u{1F}b", "ﬃ", "\u{FEFF}",
            String(repeating: "long ", count: 500), "mixed \u{8}\u{C}\n\r\t end",
        ] {
            Self.expectSame(sample)
            Self.expectSame([sample: sample])
        }
    }

    @Test func formatsNumbersLikeFoundation() {
        let doubles: [Double] = [
            0, -0.0, 1, -1, 1.5, 0.1, 0.1 + 0.2, 1e15, 1e16, 1e17, 1e21, 1e22, 1e-4, 1e-5, 1e-7, 123_456_789_012_345_680,
            .pi, -.pi, .leastNonzeroMagnitude, .leastNormalMagnitude, .greatestFiniteMagnitude, -.greatestFiniteMagnitude,
            9_007_199_254_740_992, 2.5e-308, 100, 1_000_000, 0.000001,
        ]
        Self.expectSame(doubles)
        let floats: [Float] = [0, 1, 0.1, 1e10, 3.4e38, .leastNonzeroMagnitude, 16_777_216, -2.5]
        Self.expectSame(floats)
        Self.expectSame([Int64.min, Int64.max, 0, -1, 10, 99, 100])
        Self.expectSame([UInt64.max, 0, 1])
        var random = SplitMix64(seed: 7)
        var randomDoubles: [Double] = []
        while randomDoubles.count < 5000 {
            let value = Double(bitPattern: random.next())
            if value.isFinite { randomDoubles.append(value) }
        }
        randomDoubles += (0..<2000).map { _ in Double(Int64.random(in: -1_000_000...1_000_000, using: &random)) / 100 }
        Self.expectSame(randomDoubles)
        Self.expectSame((0..<2000).map { _ in Float(bitPattern: UInt32.random(in: 0...0x7F7F_FFFF, using: &random)) })
        Self.expectSame((0..<2000).map { _ in Int64(bitPattern: random.next()) })
    }

    @Test func nonFiniteNumbersFallBackAndFailLikeFoundation() {
        for value in [Double.nan, .infinity, -.infinity] {
            Self.expectSame(["x": value], fast: false)
            #expect(throws: BusError.self) { try BusJSON.encode(["x": value]) }
        }
    }
}
