/// A kind of bearer token a route module accepts besides the core's own (session tokens and Apple
/// identity tokens), told apart by its JWS `alg` before anything in it is trusted: the Supabase
/// module's `anon` key (HS256) is one. The ``Authenticator`` hands a token of this algorithm to
/// its kind and to nothing else.
package protocol TokenKind: Sendable {
    /// The JWS `alg` of this kind's tokens (never `EdDSA` or `RS256`, the core's).
    var algorithm: String { get }

    /// The credential `token` proves (an ``Credential/apiKey`` for a key that names no one), or a
    /// `BusError` `unauthenticated`.
    func credential(for token: String) async throws -> Credential
}
