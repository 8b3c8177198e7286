import Foundation
import Identity
import Testing

/// Parsing is strict: anything that is not exactly a compact JWS is refused before verification.
@Suite struct CompactJWSTests {
    let valid: String

    init() throws {
        valid = try compactJWS(header: ["alg": "RS256", "kid": "A"], claims: ["sub": "x"]) { _ in Data([1, 2, 3]) }
    }

    @Test func parsesHeaderPayloadAndSignature() throws {
        let jws = try CompactJWS(parsing: valid)
        #expect(jws.header.alg == "RS256" && jws.header.kid == "A")
        #expect(jws.signature == Data([1, 2, 3]))
        #expect(String(decoding: jws.signingInput, as: UTF8.self) == valid.split(separator: ".")[0...1].joined(separator: "."))
    }

    @Test(arguments: ["a.b", "a.b.c.d", "", "..", "a..c", "abc"])
    func wrongSegmentCountsAreMalformed(_ token: String) throws {
        #expect(try thrown { try CompactJWS(parsing: token) }?.isMalformed == true)
    }

    @Test func badBase64IsMalformed() throws {
        for segment in ["a*b", "ab=", "a+b", "a/b", "a", "ab c"] {
            #expect(try thrown { try CompactJWS(parsing: replacingSegment(2, of: valid, with: segment)) }?.isMalformed == true)
            #expect(try thrown { try CompactJWS(parsing: replacingSegment(0, of: valid, with: segment)) }?.isMalformed == true)
        }
    }

    @Test func headerMustBeAJSONObjectWithAlg() throws {
        for header in ["not json", "[1,2]", "{\"kid\":\"A\"}"] {
            let token = replacingSegment(0, of: valid, with: Base64URL.encode(Data(header.utf8)))
            #expect(try thrown { try CompactJWS(parsing: token) }?.isMalformed == true)
        }
    }

    @Test func criticalHeaderExtensionsAreRefused() throws {
        let token = try compactJWS(header: ["alg": "RS256", "kid": "A", "crit": ["b64"], "b64": false], claims: [:]) { _ in Data([1]) }
        #expect(try thrown { try CompactJWS(parsing: token) }?.isMalformed == true)
    }

    @Test func hugeTokenIsRefusedBeforeParsing() throws {
        let huge = valid + String(repeating: "A", count: CompactJWS.defaultMaximumLength)
        #expect(try thrown { try CompactJWS(parsing: huge) } == .tokenTooLarge)
    }

    @Test func base64URLRoundTripsAndIsStrict() {
        for length in 0..<40 {
            let bytes = Data((0..<length).map { UInt8(truncatingIfNeeded: $0 &* 37 &+ 250) })
            let text = Base64URL.encode(bytes)
            #expect(!text.contains("=") && !text.contains("+") && !text.contains("/"))
            #expect(Base64URL.decode(text) == bytes)
        }
        #expect(Base64URL.decode("AB") == nil)  // non-canonical trailing bits (canonical: "AA")
        #expect(Base64URL.decode("AA") == Data([0]))
    }

    /// The table codec against Foundation's base64 (translated to the url alphabet) as the
    /// reference, over every length up to 3 whole blocks and random bytes.
    @Test func base64URLMatchesFoundationsBase64() {
        var generator = SystemRandomNumberGenerator()
        for length in 0..<200 {
            let bytes = Data((0..<length).map { _ in UInt8.random(in: 0...255, using: &generator) })
            let reference = bytes.base64EncodedString()
                .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
                .replacingOccurrences(of: "=", with: "")
            #expect(Base64URL.encode(bytes) == reference)
            #expect(Base64URL.decode(reference) == bytes)
            #expect(Base64URL.decode(Substring(reference)) == bytes)
        }
    }

    @Test func base64URLRefusesEveryOtherSpelling() {
        // Lengths that are no whole bytes, padding, other alphabets, whitespace, non-ASCII, and
        // set bits after the last whole byte ("_x" and "__9" spell what "_w" and "__8" spell).
        for text in ["A", "AAAAA", "AA==", "AAA=", "AA+A", "AA/A", "AA A", "AA\nA", "AÀAA", "AB", "AAB", "_x", "__9"] {
            #expect(Base64URL.decode(text) == nil, "\(text)")
        }
        #expect(Base64URL.decode("") == Data())
        #expect(Base64URL.decode("_w") == Data([0xFF]))
        #expect(Base64URL.decode("__8") == Data([0xFF, 0xFF]))
        #expect(Base64URL.decode("_-_-") == Data([0xFF, 0xEF, 0xFE]))
        #expect(Base64URL.decode("AAE") == Data([0, 1]))
    }
}
