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

    /// The scheme in any case, then one space and a token, trimmed as above.
    @Test(arguments: [
        ("Bearer abc", "abc"), ("bearer abc", "abc"), ("BEARER abc", "abc"), ("bEaReR  abc ", "abc"), ("Bearer é", "é"),
        ("Bearer \ta b\t", "a b"),
    ])
    func theTokenFollowsTheScheme(_ header: String, _ token: String) {
        #expect(Authenticator.bearerToken(header) == token)
    }

    /// Every door reads the header with this one parser, so an empty token is refused alike at all.
    @Test(arguments: [
        "Bearer ", "Bearer   ", "Bearer \t", "Bearer", "Bearer\tabc", "Basic abc", "Bearerabc", "", "Bearex abc", "Beare", "Bearer\u{301} abc",
    ])
    func otherSchemesAndEmptyTokensAreRefused(_ header: String) {
        #expect(Authenticator.bearerToken(header) == nil)
    }
}
