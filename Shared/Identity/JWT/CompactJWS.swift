import Foundation

/// The protected header of a JWS, reduced to the members this module acts on.
public struct JOSEHeader: Sendable, Equatable, Decodable {
    /// Signature algorithm (`RS256`, `EdDSA`, ...). Each verifier accepts exactly one.
    public let alg: String
    /// Key id: which key of the set signed the token.
    public let kid: String?
    /// Media type, usually `JWT`; informational only.
    public let typ: String?
    /// Critical extensions. None are understood, so any token that lists one is refused.
    public let crit: [String]?
}

/// A compact JWS (`header.payload.signature`) split and decoded, not yet verified.
///
/// Parsing is strict and bounded: exactly three non-empty segments, strict base64url, a header
/// that is a JSON object with `alg`, no `crit`, and an overall length limit checked before any
/// work. Nothing here trusts the content: callers check the algorithm, then the signature over
/// ``signingInput``, and only then read ``payload``.
public struct CompactJWS: Sendable {
    /// Default upper bound on a token's length in bytes. Apple identity tokens and our session
    /// tokens are around 1 KB; 8 KiB leaves room without letting a caller make us decode megabytes.
    public static let defaultMaximumLength = 8 * 1024

    public let header: JOSEHeader
    /// The decoded payload bytes (JSON claims), unverified until the signature is checked.
    public let payload: Data
    /// The ASCII bytes `base64url(header) "." base64url(payload)` the signature covers.
    public let signingInput: Data
    /// The decoded signature bytes.
    public let signature: Data

    /// One decoder for every header (Foundation's coders are `Sendable`): building one per token
    /// showed in the gateway's profile.
    private static let headerDecoder = JSONDecoder()

    /// Splits and decodes `token`, throwing ``IdentityError/malformed(_:)`` or
    /// ``IdentityError/tokenTooLarge``.
    public init(parsing token: String, maximumLength: Int = CompactJWS.defaultMaximumLength) throws {
        guard token.utf8.count <= maximumLength else { throw IdentityError.tokenTooLarge }
        let parts = token.utf8.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false)
        guard parts.count == 3 else { throw IdentityError.malformed("expected three segments") }
        guard parts.allSatisfy({ !$0.isEmpty }) else { throw IdentityError.malformed("empty segment") }
        guard let headerBytes = Base64URL.decode(Substring(parts[0])),
            let payload = Base64URL.decode(Substring(parts[1])),
            let signature = Base64URL.decode(Substring(parts[2]))
        else { throw IdentityError.malformed("invalid base64url") }
        let header: JOSEHeader
        do {
            header = try Self.headerDecoder.decode(JOSEHeader.self, from: headerBytes)
        } catch {
            throw IdentityError.malformed("invalid header")
        }
        guard header.crit == nil else { throw IdentityError.malformed("unsupported critical header") }
        self.header = header
        self.payload = payload
        self.signature = signature
        let headerAndPayload = parts[1].endIndex
        self.signingInput = Data(token.utf8[token.utf8.startIndex..<headerAndPayload])
    }

    /// Builds `header.payload.signature` from already-encoded parts: used by signers.
    static func serialize(header: Data, payload: Data, sign: (Data) throws -> Data) rethrows -> String {
        let input = Base64URL.encode(header) + "." + Base64URL.encode(payload)
        let signature = try sign(Data(input.utf8))
        return input + "." + Base64URL.encode(signature)
    }
}
