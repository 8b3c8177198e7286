import Foundation
import JWTKit

/// A compact JWS (`header.payload.signature`) split, checked and decoded, not yet verified: the
/// checks jwt-kit leaves to its caller, made before jwt-kit verifies a token.
///
/// jwt-kit splits a token at its periods (the same `TokenParts` used here), decodes segments
/// leniently, and picks its key by `kid` with a fall-back to the collection's default key. So
/// every verifier here first parses with this type: an overall length limit checked before any
/// work, exactly three non-empty segments, strict base64url (``Base64URL``), a header that is a
/// JSON object with a string `alg`, and no `crit`. The verifier then checks the algorithm and the
/// key id itself and only then hands the token to jwt-kit, which checks the signature over the
/// same bytes before it decodes the claims.
public struct CompactJWS: Sendable {
    /// Default upper bound on a token's length in bytes. Apple identity tokens and our session
    /// tokens are around 1 KB; 8 KiB leaves room without letting a caller make us decode megabytes.
    public static let defaultMaximumLength = 8 * 1024

    /// jwt-kit's header type; ``alg`` is always present here.
    public let header: JWTHeader
    /// The decoded payload bytes (JSON claims), unverified until the signature is checked.
    public let payload: Data
    /// The ASCII bytes `base64url(header) "." base64url(payload)` the signature covers.
    public let signingInput: Data
    /// The decoded signature bytes.
    public let signature: Data

    /// One decoder for every header (Foundation's coders are `Sendable`).
    private static let headerDecoder = JSONDecoder()

    /// Splits and decodes `token`, throwing ``IdentityError/malformed(_:)`` or
    /// ``IdentityError/tokenTooLarge``.
    public init(parsing token: String, maximumLength: Int = CompactJWS.defaultMaximumLength) throws {
        guard token.utf8.count <= maximumLength else { throw IdentityError.tokenTooLarge }
        let parts: (header: ArraySlice<UInt8>, payload: ArraySlice<UInt8>, signature: ArraySlice<UInt8>)
        do {
            parts = try DefaultJWTParser().getTokenParts(Array(token.utf8))
        } catch {
            throw IdentityError.malformed("expected three segments")
        }
        guard !parts.header.isEmpty, !parts.payload.isEmpty, !parts.signature.isEmpty else {
            throw IdentityError.malformed("empty segment")
        }
        guard let headerBytes = Base64URL.decode(String(decoding: parts.header, as: UTF8.self)),
            let payload = Base64URL.decode(String(decoding: parts.payload, as: UTF8.self)),
            let signature = Base64URL.decode(String(decoding: parts.signature, as: UTF8.self))
        else { throw IdentityError.malformed("invalid base64url") }
        let header: JWTHeader
        do {
            header = try Self.headerDecoder.decode(JWTHeader.self, from: headerBytes)
        } catch {
            throw IdentityError.malformed("invalid header")
        }
        guard case .string = header.fields["alg"] else { throw IdentityError.malformed("invalid header") }
        if let crit = header.fields["crit"], crit != .null { throw IdentityError.malformed("unsupported critical header") }
        self.header = header
        self.payload = payload
        self.signature = signature
        self.signingInput = Data(parts.header) + Data(".".utf8) + Data(parts.payload)
    }

    /// The header's `alg` (always present once parsed).
    public var algorithm: String { header.alg ?? "" }
}

extension IdentityError {
    /// The ``IdentityError`` for an error jwt-kit threw while verifying a token whose shape,
    /// algorithm and key id were already checked: a signature that does not verify, or claims
    /// that do not decode as the verifier's payload type (anything else jwt-kit throws at that
    /// point is a payload it could not read).
    static func fromJWTKit(_ error: any Error) -> IdentityError {
        if let error = error as? IdentityError { return error }
        if let error = error as? JWTError {
            switch error.errorType {
            case .signatureVerificationFailed: return .badSignature
            case .noKeyProvided, .unknownKID: return .unknownKey
            default: break
            }
        }
        return .malformed("invalid claims")
    }
}
