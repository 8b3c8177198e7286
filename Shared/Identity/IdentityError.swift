/// Why a token, key set or sealed secret was refused.
///
/// A closed, `Sendable` set so callers can map each case to a reply (the gateway answers
/// `unauthenticated` for all token failures; `keySetUnavailable` is `unavailable`). Associated
/// strings are fixed descriptions written by this module, except the algorithm name of
/// ``unsupportedAlgorithm(_:)``, which is the header's value cut to 16 characters. None holds
/// token, claim or key material, so an error is always safe to log.
public enum IdentityError: Error, Sendable, Equatable {
    /// Not a well-formed compact JWS or its JSON does not have the expected shape.
    case malformed(String)
    /// The token is longer than the verifier accepts (a cheap defence before any parsing).
    case tokenTooLarge
    /// The header names an algorithm this verifier does not accept (`none`, `HS256`, ...).
    case unsupportedAlgorithm(String)
    /// The signature does not verify with the key the header names.
    case badSignature
    /// `exp` is in the past (beyond the leeway).
    case expired
    /// `iat` or `nbf` is in the future (beyond the leeway).
    case notYetValid
    /// `iss` is not the expected issuer.
    case wrongIssuer
    /// `aud` does not name this application.
    case wrongAudience
    /// The caller gave a nonce and the token's `nonce` matches neither it nor its SHA-256 hex.
    case nonceMismatch
    /// The header's `kid` is not in the key set (after any refresh that was allowed).
    case unknownKey
    /// The key set could not be loaded (file missing, bad JSON, network failure).
    case keySetUnavailable(String)
    /// A configured key is unusable (wrong length, bad encoding, duplicate id).
    case invalidKey(String)
    /// A sealed value could not be opened: wrong key, tampered bytes or a bad envelope.
    case decryptionFailed

    /// ``unsupportedAlgorithm(_:)`` with the untrusted header value cut short for logs.
    static func unsupported(_ alg: String) -> IdentityError { .unsupportedAlgorithm(String(alg.prefix(16))) }
}
