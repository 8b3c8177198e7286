import Foundation
import TestSupport
import Testing

@testable import Bus
@testable import BusCore

/// Hand-written `encode(to:)` implementations, and random value trees, against Foundation.
@Suite struct FastJSONEncoderCustomTests {
    struct Key: CodingKey {
        var stringValue: String
        var intValue: Int? { nil }
        init(_ name: String) { stringValue = name }
        init?(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }

    /// Encodes through a closure, so each case can use the containers its own way.
    struct Custom: Encodable {
        let body: @Sendable (any Encoder) throws -> Void
        func encode(to encoder: any Encoder) throws { try body(encoder) }
    }

    @Test func handWrittenEncodersThatTheFastPathTakes() {
        // A second container(keyedBy:) call adds to the first, as in Foundation.
        FastJSONEncoderTests.expectSame(
            Custom { encoder in
                var first = encoder.container(keyedBy: Key.self)
                try first.encode(1, forKey: Key("z"))
                var second = encoder.container(keyedBy: Key.self)
                try second.encode(2, forKey: Key("a"))
            })
        // Nested containers filled in order, a nil written explicitly, an empty nested value.
        FastJSONEncoderTests.expectSame(
            Custom { encoder in
                var top = encoder.container(keyedBy: Key.self)
                var list = top.nestedUnkeyedContainer(forKey: Key("list"))
                try list.encode("x")
                var object = list.nestedContainer(keyedBy: Key.self)
                try object.encodeNil(forKey: Key("n"))
                try object.encode(Custom { _ in }, forKey: Key("nothing"))
                try list.encode(Int8(-3))
                try top.encode(list.count, forKey: Key("count"))
                var deep = top.nestedContainer(keyedBy: Key.self, forKey: Key("deep"))
                try deep.encodeIfPresent(Optional<String>.none, forKey: Key("skipped"))
                try deep.encodeIfPresent(Optional<String>.some("kept"), forKey: Key("kept"))
                try top.encode(true, forKey: Key("after"))
            })
        // A single value that is itself a keyed value, and keys that sort by UTF-8 bytes.
        FastJSONEncoderTests.expectSame(
            Custom { encoder in
                var single = encoder.singleValueContainer()
                try single.encode(
                    Custom { inner in
                        var keyed = inner.container(keyedBy: Key.self)
                        for name in ["é", "e", "E", "_", "a b", "\"q\"", "ü", "z", "0", "10", "9", "😀", "\u{7F}", "ab", "a"] {
                            try keyed.encode(name, forKey: Key(name))
                        }
                    })
            })
    }

    @Test func handWrittenEncodersThatFallBack() {
        // Writing to a container after a later sibling was opened: bytes already written.
        FastJSONEncoderTests.expectSame(
            Custom { encoder in
                var top = encoder.container(keyedBy: Key.self)
                var inner = top.nestedContainer(keyedBy: Key.self, forKey: Key("inner"))
                try top.encode(1, forKey: Key("b"))
                try inner.encode(2, forKey: Key("late"))
            }, fast: false)
        // The same key twice (Foundation keeps the last), equivalent keys, a look at the path.
        FastJSONEncoderTests.expectSame(
            Custom { encoder in
                var top = encoder.container(keyedBy: Key.self)
                try top.encode(1, forKey: Key("a"))
                try top.encode(2, forKey: Key("a"))
            }, fast: false)
        FastJSONEncoderTests.expectSame(
            Custom { encoder in
                var top = encoder.container(keyedBy: Key.self)
                try top.encode(1, forKey: Key("é"))
                try top.encode(2, forKey: Key("e\u{301}"))
            }, fast: false)
        FastJSONEncoderTests.expectSame(
            Custom { encoder in
                var top = encoder.container(keyedBy: Key.self)
                try top.encode(encoder.codingPath.count, forKey: Key("depth"))
            }, fast: false)
        // Super encoders, Decimal, and a top-level value that encodes nothing (an error to both).
        FastJSONEncoderTests.expectSame(
            Custom { encoder in
                var top = encoder.container(keyedBy: Key.self)
                try top.encode(1, forKey: Key("own"))
                var parent = top.superEncoder().singleValueContainer()
                try parent.encode("super")
            }, fast: false)
        FastJSONEncoderTests.expectSame(["price": Decimal(string: "12.50")!], fast: false)
        FastJSONEncoderTests.expectSame(Custom { _ in }, fast: false)
        // An error a type catches and recovers from still sends the whole value to Foundation.
        FastJSONEncoderTests.expectSame(
            Custom { encoder in
                var top = encoder.container(keyedBy: Key.self)
                if (try? top.encode(Double.nan, forKey: Key("x"))) == nil { try top.encode(0, forKey: Key("y")) }
            }, fast: false)
    }

    /// A random JSON-like tree, encoded through every kind of container.
    indirect enum Node: Encodable {
        case object([(String, Node)])
        case array([Node])
        case string(String)
        case int(Int64)
        case double(Double)
        case bool(Bool)
        case null
        case date(Date)
        case uuid(UUID)
        case optional(Int?)

        func encode(to encoder: any Encoder) throws {
            switch self {
            case .object(let members):
                var container = encoder.container(keyedBy: Key.self)
                for (key, value) in members { try container.encode(value, forKey: Key(key)) }
            case .array(let items):
                var container = encoder.unkeyedContainer()
                for item in items { try container.encode(item) }
            case .string(let text): try text.encode(to: encoder)
            case .int(let number): try number.encode(to: encoder)
            case .double(let number): try number.encode(to: encoder)
            case .bool(let flag): try flag.encode(to: encoder)
            case .null:
                var container = encoder.singleValueContainer()
                try container.encodeNil()
            case .date(let date): try date.encode(to: encoder)
            case .uuid(let id):
                var container = encoder.singleValueContainer()
                try container.encode(id)
            case .optional(let value): try value.encode(to: encoder)
            }
        }

        static func random(depth: Int, using rng: inout SplitMix64) -> Node {
            switch Int.random(in: 0..<(depth > 3 ? 8 : 11), using: &rng) {
            case 0: return .string(randomText(using: &rng))
            case 1: return .int(Int64(bitPattern: rng.next()) >> UInt64.random(in: 0..<64, using: &rng))
            case 2:
                let value = Double(bitPattern: rng.next())
                return .double(value.isFinite ? value : Double(Int.random(in: -99...99, using: &rng)) / 4)
            case 3: return .bool(Bool.random(using: &rng))
            case 4: return .null
            case 5: return .date(Date(timeIntervalSince1970: Double(Int64.random(in: -2_000_000_000_000...4_000_000_000_000, using: &rng)) / 1000))
            case 6: return .uuid(UUID())
            case 7: return .optional(Bool.random(using: &rng) ? nil : Int.random(in: -5...5, using: &rng))
            case 8, 9:
                var keys = Set<String>()
                for _ in 0..<Int.random(in: 0...6, using: &rng) { keys.insert(randomText(using: &rng, ascii: Bool.random(using: &rng))) }
                return .object(keys.shuffled(using: &rng).map { ($0, random(depth: depth + 1, using: &rng)) })
            default: return .array((0..<Int.random(in: 0...5, using: &rng)).map { _ in random(depth: depth + 1, using: &rng) })
            }
        }

        static func randomText(using rng: inout SplitMix64, ascii: Bool = false) -> String {
            let pool: [Unicode.Scalar] =
                ascii
                ? (0x20..<0x7F).compactMap(Unicode.Scalar.init) + ["\n", "\t", "\u{1}", "\u{1F}"]
                : (0..<0x80).compactMap(Unicode.Scalar.init) + ["é", "ü", "ß", "\u{2028}", "😀", "中", "\u{301}", "\u{FEFF}"]
            var text = ""
            for _ in 0..<Int.random(in: 0...12, using: &rng) { text.unicodeScalars.append(pool.randomElement(using: &rng)!) }
            return text
        }
    }

    @Test func randomTreesMatchFoundation() {
        var rng = SplitMix64(seed: 2026)
        for _ in 0..<3000 {
            FastJSONEncoderTests.expectSame(Node.random(depth: 0, using: &rng))
        }
    }
}
