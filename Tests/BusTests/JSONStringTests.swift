import Foundation
import Testing

@testable import BusCore

/// ``JSONString`` is the one escaper for payloads, the JSON envelope header, log lines and health
/// bodies: it must write what Foundation's encoder writes for a string, and what it writes must
/// read back as the same text.
@Suite struct JSONStringTests {
    static let samples: [String] =
        (0..<0x80).map { String(UnicodeScalar(UInt8($0))) } + [
            "", "plain", "a \"quoted\" word", "back\\slash", "tab\there\nnewline\r\n", "\u{08}\u{0C}\u{00}\u{1F}",
            "/legal/terms", "émigré — “quotes” ✓ 🎉", "line\u{2028}separator\u{2029}", String(repeating: "ten kilobytes\n", count: 800),
            "escape at the end\n", "\"", "\\\\",
        ]

    @Test func writesFoundationsBytes() throws {
        let encoder = BusJSON.encoder()
        for text in Self.samples {
            var bytes: [UInt8] = []
            JSONString.append(text, to: &bytes)
            #expect(Data(bytes) == (try encoder.encode(text)), "differs for \(Array(text.utf8))")
            #expect(JSONString.quoted(text) == String(decoding: try encoder.encode(text), as: UTF8.self))
        }
    }

    @Test func readsBackAsTheSameText() throws {
        for text in Self.samples {
            #expect(try JSONDecoder().decode(String.self, from: Data(JSONString.quoted(text).utf8)) == text)
        }
    }

    @Test func saysWhetherTheTextWasASCIIAndNeededNoEscapes() {
        var bytes: [UInt8] = []
        #expect(JSONString.append("plain", to: &bytes) == (ascii: true, clean: true))
        #expect(JSONString.append("new\nline", to: &bytes) == (ascii: true, clean: false))
        #expect(JSONString.append("émigré", to: &bytes) == (ascii: false, clean: true))
        #expect(String(decoding: bytes, as: UTF8.self) == "\"plain\"\"new\\nline\"\"émigré\"")
    }

    @Test func objectKeepsTheOrderGiven() {
        let object = JSONString.object([("z", "1"), ("a", JSONString.quoted("x\"y"))])
        #expect(object == "{\"z\":1,\"a\":\"x\\\"y\"}")
    }
}
