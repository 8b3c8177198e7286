import Foundation
import Testing

@testable import Bus
@testable import BusCore

/// The fast payload coders must agree with Foundation's, value for value and error for error.
@Suite struct FastJSONTests {
    struct Inner: Codable, Equatable {
        var name: String
        var tags: [String]
        var scores: [String: Int]?
    }
    enum Either: Codable, Equatable {
        case int(Int)
        case double(Double)
        init(from decoder: any Decoder) throws {
            let container = try decoder.singleValueContainer()
            if let int = try? container.decode(Int.self) { self = .int(int) } else { self = .double(try container.decode(Double.self)) }
        }
        func encode(to encoder: any Encoder) throws {
            var container = encoder.singleValueContainer()
            switch self {
            case .int(let int): try container.encode(int)
            case .double(let double): try container.encode(double)
            }
        }
    }
    struct Shape: Codable, Equatable {
        var id: UUID
        var at: Date
        var count: Int64
        var ratio: Double
        var small: UInt8
        var flag: Bool
        var note: String?
        var missing: String?
        var inner: [Inner]
        var either: [Either]
        var blob: Data?
    }

    @Test func decodesLikeFoundation() throws {
        let json = #"""
            { "id":"6F9619FF-8B86-D011-B42D-00C04FC964FF", "at":"2026-11-22T03:10:00.123Z", "count":-9223372036854775808,
              "ratio":1.5e-3, "small":255, "flag":true, "note":"tab\there \u00e9\ud83d\ude00 \/", "missing":null,
              "inner":[{"name":"ü","tags":[],"scores":{"a":1,"b":-2}},{"name":"x","tags":["p","q"]}],
              "either":[1, 1e2, 2.5], "blob":"AQID", "unknown":{"deep":[[1],{"k":null}]} }
            """#
        let data = Data(json.utf8)
        let expected = try BusJSON.decoder().decode(Shape.self, from: data)
        #expect(try BusJSON.decode(Shape.self, from: data) == expected)
        #expect(expected.either == [.int(1), .int(100), .double(2.5)])
    }

    @Test(arguments: [
        #"{"count":"three"}"#, #"{"small":256}"#, #"{"flag":1}"#, #"{"note":"\x"}"#, #"{"a":1,"a":2}"#, "[1,]", "01", "{} x",
    ])
    func rejectsOrFallsBackLikeFoundation(_ text: String) {
        struct Loose: Codable {
            var count: Int?
            var small: UInt8?
            var flag: Bool?
            var note: String?
            var a: Int?
        }
        let data = Data(text.utf8)
        let foundation = Result { try BusJSON.decoder().decode(Loose.self, from: data) }
        let ours = Result { try BusJSON.decode(Loose.self, from: data) }
        switch (foundation, ours) {
        case (.success(let a), .success(let b)):
            #expect(a.count == b.count && a.small == b.small && a.flag == b.flag && a.note == b.note && a.a == b.a)
        case (.failure(let a), .failure(let b)): #expect("\(a)" == "\(b)")
        default: Issue.record("fast and Foundation decoders disagree on \(text)")
        }
    }
}
