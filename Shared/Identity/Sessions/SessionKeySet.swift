import Crypto
import Foundation

/// An Ed25519 key that signs session tokens, with the id (`kid`) tokens carry to name it.
public struct SessionSigningKey: Sendable, CustomStringConvertible {
    public let id: String
    let privateKey: Curve25519.Signing.PrivateKey

    /// A key from its 32-byte seed (the form kept in configuration, base64).
    public init(id: String, seed: some ContiguousBytes) throws {
        try KeyID.validate(id)
        do {
            privateKey = try Curve25519.Signing.PrivateKey(rawRepresentation: seed)
        } catch {
            throw IdentityError.invalidKey("session signing key must be a 32-byte Ed25519 seed")
        }
        self.id = id
    }

    /// A fresh random key (tests, first start of a development setup).
    public static func generate(id: String) throws -> SessionSigningKey {
        try SessionSigningKey(id: id, seed: Curve25519.Signing.PrivateKey().rawRepresentation)
    }

    public var publicKey: Curve25519.Signing.PublicKey { privateKey.publicKey }

    /// Never the key material: a key may end up in a log line through string interpolation.
    public var description: String { "SessionSigningKey(id: \(id))" }
}

/// The keys for session tokens: one current key that signs, and the public keys of earlier
/// current keys that still verify.
///
/// Rotation: deploy a new current key and list the old one's public key in `previous`; once every
/// token it signed has expired (the token lifetime), drop it from `previous`.
public struct SessionKeySet: Sendable {
    public let current: SessionSigningKey
    public let previous: [String: Curve25519.Signing.PublicKey]

    public init(current: SessionSigningKey, previous: [String: Curve25519.Signing.PublicKey] = [:]) throws {
        guard previous[current.id] == nil else { throw IdentityError.invalidKey("previous key reuses the current key id") }
        for id in previous.keys { try KeyID.validate(id) }
        self.current = current
        self.previous = previous
    }

    /// Reads configuration: `current` is `kid=<base64 seed>`, `previous` is
    /// `kid=<base64 public key>` pairs, comma-separated (may be empty).
    public init(currentConfiguration current: String, previousConfiguration previous: String = "") throws {
        let currentPairs = try KeyID.parsePairs(current)
        guard currentPairs.count == 1 else { throw IdentityError.invalidKey("exactly one current session key expected") }
        let signing = try SessionSigningKey(id: currentPairs[0].id, seed: currentPairs[0].bytes)
        var keys: [String: Curve25519.Signing.PublicKey] = [:]
        for pair in try KeyID.parsePairs(previous) {
            guard keys[pair.id] == nil, let key = try? Curve25519.Signing.PublicKey(rawRepresentation: pair.bytes) else {
                throw IdentityError.invalidKey("previous session keys must be distinct 32-byte Ed25519 public keys")
            }
            keys[pair.id] = key
        }
        try self.init(current: signing, previous: keys)
    }

    /// The public key with id `kid`, current or previous.
    func verificationKey(id kid: String) -> Curve25519.Signing.PublicKey? {
        kid == current.id ? current.publicKey : previous[kid]
    }
}

/// Key ids and the `id=base64` lists configuration holds them in.
enum KeyID {
    /// 1–64 characters of `A-Z a-z 0-9 - _ .`: safe in a JWT header, a log line and an envelope.
    static func validate(_ id: String) throws {
        let allowed = id.utf8.allSatisfy { byte in
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "_"), UInt8(ascii: "."):
                true
            default: false
            }
        }
        guard allowed, (1...64).contains(id.utf8.count) else {
            throw IdentityError.invalidKey("key id must be 1-64 characters of A-Z a-z 0-9 - _ .")
        }
    }

    /// Parses `id=base64,id=base64`; the error never repeats the (secret) value.
    static func parsePairs(_ text: String) throws -> [(id: String, bytes: Data)] {
        try text.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }.map { item in
            guard let equals = item.firstIndex(of: "="), let bytes = Data(base64Encoded: String(item[item.index(after: equals)...]))
            else { throw IdentityError.invalidKey("expected id=base64 key") }
            let id = String(item[..<equals])
            try validate(id)
            return (id, bytes)
        }
    }
}
