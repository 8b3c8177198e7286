import Testing

@testable import GatewayService

/// The bearer token is the header's value after `Bearer `, without the optional whitespace HTTP
/// allows around it, and nothing else removed.
@Suite struct AuthorizationHeaderTests {
    @Test(arguments: [
        ("abc.def.ghi", "abc.def.ghi"), ("  abc.def.ghi", "abc.def.ghi"), ("abc.def.ghi \t ", "abc.def.ghi"),
        ("\tabc def\t", "abc def"), ("", ""), ("   ", ""), (" é.ü ", "é.ü"),
    ])
    func optionalWhitespaceIsTrimmed(_ value: String, _ expected: String) {
        #expect(Authenticator.trimmingOptionalWhitespace(Substring(value)) == expected)
    }
}
