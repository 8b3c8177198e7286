import Crypto
import Foundation
import Hex

/// An opaque refresh token: 256 random bits, handed to the app once, stored only as its SHA-256.
///
/// A database leak then yields hashes that cannot be used as tokens; with 256 bits of entropy a
/// plain (unsalted, fast) hash is enough, and it lets the store find a token by an indexed lookup.
public struct RefreshToken: Sendable, CustomStringConvertible {
    /// The value to give to the app (base64url, 43 characters). Never store or log it.
    public let token: String
    /// Lowercase hex SHA-256 of ``token``: the value to store and look up.
    public let hash: String

    /// A fresh token from the system's secure random generator.
    public static func generate() -> RefreshToken {
        let bytes = SymmetricKey(size: .bits256).withUnsafeBytes { Data($0) }
        let token = Base64URL.encode(bytes)
        return RefreshToken(token: token, hash: hash(of: token))
    }

    /// The stored form of a token the app presents.
    public static func hash(of token: String) -> String {
        Hex.string(SHA256.hash(data: Data(token.utf8)))
    }

    /// Only the hash: the token itself must not reach a log through interpolation.
    public var description: String { "RefreshToken(hash: \(hash))" }
}
