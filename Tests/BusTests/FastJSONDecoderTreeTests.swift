import Foundation
import TestSupport
import Testing

@testable import Bus
@testable import BusCore

/// The fast payload decoder against Foundation's on random documents: every value decoded through
/// every kind of container (keyed with `allKeys`/`contains`, unkeyed, single values probed with
/// `try?`), with escaped, non-ASCII and canonically equivalent keys among them.
@Suite struct FastJSONDecoderTreeTests {
    struct Key: CodingKey {
        var stringValue: String
        var intValue: Int? { nil }
        init(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }

    /// What a document decodes to, probing each value the way hand-written decoders do.
    indirect enum Tree: Decodable, Equatable {
        case object([String: Tree])
        case array([Tree])
        case string(String)
        case int(Int64)
        case double(Double)
        case bool(Bool)
        case null

        init(from decoder: any Decoder) throws {
            if let container = try? decoder.container(keyedBy: Key.self) {
                var members: [String: Tree] = [:]
                for key in container.allKeys {
                    guard container.contains(key) else { throw DecodingError.keyNotFound(key, .init(codingPath: [], debugDescription: "")) }
                    members[key.stringValue] = try container.decode(Tree.self, forKey: key)
                }
                self = .object(members)
            } else if var container = try? decoder.unkeyedContainer() {
                var items: [Tree] = []
                while !container.isAtEnd { items.append(try container.decode(Tree.self)) }
                self = .array(items)
            } else {
                let value = try decoder.singleValueContainer()
                if value.decodeNil() {
                    self = .null
                } else if let flag = try? value.decode(Bool.self) {
                    self = .bool(flag)
                } else if let number = try? value.decode(Int64.self) {
                    self = .int(number)
                } else if let number = try? value.decode(Double.self) {
                    self = .double(number)
                } else {
                    self = .string(try value.decode(String.self))
                }
            }
        }
    }

    /// A record with the shapes contracts use, decoded by synthesized code.
    struct Record: Codable, Equatable {
        var id: UUID
        var name: String
        var at: Date?
        var count: Int
        var tags: [String]
        var nested: [String: [Int]]
        var flag: Bool?
    }

    static func randomJSON(depth: Int, using rng: inout SplitMix64) -> String {
        func text() -> String {
            let pool = ["a", "b", "é", "e\u{301}", "\\\"", "\\n", "\\u00e9", "\\ud83d\\ude00", "z", "0", " ", "/"]
            return (0..<Int.random(in: 0...4, using: &rng)).map { _ in pool.randomElement(using: &rng)! }.joined()
        }
        switch Int.random(in: 0..<(depth > 3 ? 6 : 9), using: &rng) {
        case 0: return "\"\(text())\""
        case 1: return String(Int64.random(in: -1_000_000...1_000_000, using: &rng))
        case 2: return ["1.5", "-0.25", "1e3", "2E-2", "0", "-0", "9223372036854775807", "9223372036854775808"].randomElement(using: &rng)!
        case 3: return Bool.random(using: &rng) ? "true" : "false"
        case 4: return "null"
        case 5: return " \"\(text())\" "
        case 6, 7:
            let members = (0..<Int.random(in: 0...5, using: &rng)).map { _ in
                "\"\(text())\":\(randomJSON(depth: depth + 1, using: &rng))"
            }
            return "{" + members.joined(separator: Bool.random(using: &rng) ? "," : " , ") + "}"
        default:
            return "[" + (0..<Int.random(in: 0...4, using: &rng)).map { _ in randomJSON(depth: depth + 1, using: &rng) }.joined(separator: ",") + "]"
        }
    }

    static func expectSame<T: Decodable & Equatable>(_ type: T.Type, _ json: String, sourceLocation: SourceLocation = #_sourceLocation) {
        let data = Data(json.utf8)
        let foundation = Result { try BusJSON.decoder().decode(T.self, from: data) }
        let viaBus = Result { try BusJSON.decode(T.self, from: data) }
        switch (foundation, viaBus) {
        case (.success(let a), .success(let b)): #expect(a == b, "\(json)", sourceLocation: sourceLocation)
        case (.failure(let a), .failure(let b)): #expect("\(a)" == "\(b)", "\(json)", sourceLocation: sourceLocation)
        default: Issue.record("decoders disagree on \(json)", sourceLocation: sourceLocation)
        }
        // Where the fast path does not fall back, its value is Foundation's.
        if let fast = try? FastJSONDecoder.decode(T.self, from: data) {
            #expect((try? foundation.get()) == fast, "\(json)", sourceLocation: sourceLocation)
        }
    }

    @Test func randomDocumentsDecodeLikeFoundation() {
        var rng = SplitMix64(seed: 7)
        for _ in 0..<3000 { Self.expectSame(Tree.self, Self.randomJSON(depth: 0, using: &rng)) }
    }

    @Test func recordsDecodeOnTheFastPathLikeFoundation() throws {
        var rng = SplitMix64(seed: 11)
        for index in 0..<500 {
            let record = Record(
                id: UUID(), name: String(repeating: "é\"\n", count: index % 4) + "n\(index)",
                at: index % 3 == 0 ? nil : Date(timeIntervalSince1970: Double(Int.random(in: 0...4_000_000_000_000, using: &rng)) / 1000),
                count: Int.random(in: Int.min...Int.max, using: &rng), tags: (0..<index % 5).map { "t\($0)" },
                nested: ["a": [1, 2], "\u{E9}": [], "e\u{301}x": [3]], flag: index % 2 == 0 ? nil : true)
            let json = try BusJSON.encoder().encode(record)
            Self.expectSame(Record.self, String(decoding: json, as: UTF8.self))
            // These must not fall back (dates may differ from `record` in the last bit, as Foundation's do).
            #expect(try FastJSONDecoder.decode(Record.self, from: json) == BusJSON.decoder().decode(Record.self, from: json))
        }
    }

    /// Escapes, valid and not, in random strings: the parser checks them without unescaping and the
    /// scanner unescapes them once; together they must accept and refuse what Foundation does.
    @Test func randomEscapesDecodeLikeFoundation() {
        let pool = [
            "a", "é", #"\""#, #"\\"#, #"\/"#, #"\b"#, #"\f"#, #"\n"#, #"\r"#, #"\t"#, #"\u00e9"#, #"\u0000"#, #"\uFFFF"#,
            #"\uD83D\uDE00"#, #"\uDBFF\uDFFF"#, #"\ud83d"#, #"\ude00"#, #"\ud83d\u0041"#, #"\u+041"#, #"\u-000"#, #"\u12"#,
            #"\x"#, #"\U00E9"#, #"\u00G0"#,
        ]
        var rng = SplitMix64(seed: 13)
        for _ in 0..<2000 {
            let text = (0..<Int.random(in: 1...4, using: &rng)).map { _ in pool.randomElement(using: &rng)! }.joined()
            Self.expectSame([String].self, "[\"\(text)\"]")
        }
    }

    /// UUIDs are parsed on the fast path (Foundation's parser makes 16 `sscanf` calls); every text
    /// Foundation's would judge otherwise must fall back and get Foundation's value or error.
    @Test(arguments: [
        "E621E1F8-C36C-495A-93FC-0C247A3E6E5F", "e621e1f8-c36c-495a-93fc-0c247a3e6e5f", "e621E1F8-c36c-495A-93fc-0C247a3e6e5f",
        "00000000-0000-0000-0000-000000000000", "FFFFFFFF-FFFF-FFFF-FFFF-FFFFFFFFFFFF", "E621E1F8C36C495A93FC0C247A3E6E5F",
        "E621E1F8-C36C-495A-93FC-0C247A3E6E5", "E621E1F8-C36C-495A-93FC-0C247A3E6E5FA", "E621E1F8_C36C-495A-93FC-0C247A3E6E5F",
        "G621E1F8-C36C-495A-93FC-0C247A3E6E5F", " E621E1F8-C36C-495A-93FC-0C247A3E6E5", "{E621E1F8-C36C-495A-93FC-0C247A3E6E}",
        #"\u0045621E1F8-C36C-495A-93FC-0C247A3E6E5F"#, "", #"E621E1F8-C36C-495A-93FC-0C247A3E6E5\u00e9"#,
    ])
    func uuidsDecodeLikeFoundation(_ text: String) {
        Self.expectSame([UUID].self, "[\"\(text)\"]")
        Self.expectSame([String: UUID].self, "{\"id\":\"\(text)\"}")
    }

    @Test(arguments: [
        #"{"a":1,"a":2}"#, #"{"é":1,"e\u0301":2}"#, #"{"\u0061":1,"a":2}"#, #"{"x":[1,{"y":2,"y":3}]}"#,
        #"{"a":{"b":{"c":[[[]]]}}}"#, "[1,2,3", "{\"a\":1 \"b\":2}", #"["\ud800"]"#, "[\"\u{7F}\"]",
        // A sign is not a hex digit (the scanner once let `UInt32(_:radix:)` read these).
        #"["\u+041"]"#, #"["\u-000"]"#, #"{"a":"x\u+041"}"#,
    ])
    func edgeDocumentsDecodeLikeFoundation(_ json: String) {
        Self.expectSame(Tree.self, json)
    }
}
