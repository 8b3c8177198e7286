import Crypto
import Foundation

/// AES-256-GCM keys for secrets at rest, by key id: one current key that seals, older keys that
/// still open.
public struct EncryptionKeyRing: Sendable, CustomStringConvertible {
    public let currentID: String
    private let keys: [String: SymmetricKey]

    /// - Parameter previous: keys whose envelopes must still open after a rotation.
    public init(currentID: String, current: SymmetricKey, previous: [String: SymmetricKey] = [:]) throws {
        try KeyID.validate(currentID)
        guard previous[currentID] == nil else { throw IdentityError.invalidKey("previous key reuses the current key id") }
        var keys = previous
        keys[currentID] = current
        for (id, key) in keys {
            try KeyID.validate(id)
            guard key.bitCount == 256 else { throw IdentityError.invalidKey("encryption keys must be 256 bits") }
        }
        self.currentID = currentID
        self.keys = keys
    }

    /// Reads configuration: `kid=<base64 32 bytes>` pairs, comma-separated, the current key first.
    public init(configuration: String) throws {
        let pairs = try KeyID.parsePairs(configuration)
        guard let first = pairs.first else { throw IdentityError.invalidKey("no encryption key configured") }
        var previous: [String: SymmetricKey] = [:]
        for pair in pairs.dropFirst() {
            guard previous[pair.id] == nil else { throw IdentityError.invalidKey("duplicate encryption key id") }
            previous[pair.id] = SymmetricKey(data: pair.bytes)
        }
        try self.init(currentID: first.id, current: SymmetricKey(data: first.bytes), previous: previous)
    }

    func key(id: String) -> SymmetricKey? { keys[id] }

    /// Key ids only.
    public var description: String { "EncryptionKeyRing(current: \(currentID), keys: \(keys.keys.sorted()))" }
}

/// Seals secrets (Apple's refresh token) for storage: AES-256-GCM in a versioned text envelope.
///
/// Envelope: `v1.<key id>.<base64url(nonce ‖ ciphertext ‖ tag)>`, text so it fits a `text`
/// column and shows which key sealed it. The authenticated data is `v1.<key id>.<context>`, so
/// neither the key id nor the context can be changed without the open failing; pass the owner's
/// id as `context` and a sealed value copied to another user's row will not open there.
/// Rotation: seal with the current key, open with any listed key, and re-seal values for which
/// ``needsResealing(_:)`` is true.
public struct SecretBox: Sendable {
    public static let version = "v1"
    public let keys: EncryptionKeyRing

    public init(keys: EncryptionKeyRing) { self.keys = keys }

    /// Encrypts `plaintext` with the current key and a fresh random nonce.
    public func seal(_ plaintext: some DataProtocol, context: String = "") throws -> String {
        let keyID = keys.currentID
        guard let key = keys.key(id: keyID) else { throw IdentityError.invalidKey("current key missing") }
        let box = try AES.GCM.seal(plaintext, using: key, authenticating: Self.associatedData(keyID, context))
        guard let combined = box.combined else { throw IdentityError.invalidKey("unexpected nonce size") }
        return "\(Self.version).\(keyID).\(Base64URL.encode(combined))"
    }

    /// Decrypts an envelope made by ``seal(_:context:)`` with the same `context`; throws
    /// ``IdentityError/decryptionFailed`` for an unknown key, a wrong context or any tampering.
    public func open(_ envelope: String, context: String = "") throws -> Data {
        let parts = envelope.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, parts[0] == Self.version, let key = keys.key(id: String(parts[1])),
            let combined = Base64URL.decode(parts[2]), let box = try? AES.GCM.SealedBox(combined: combined),
            let plaintext = try? AES.GCM.open(box, using: key, authenticating: Self.associatedData(String(parts[1]), context))
        else { throw IdentityError.decryptionFailed }
        return plaintext
    }

    /// Whether `envelope` was sealed with a key other than the current one.
    public func needsResealing(_ envelope: String) -> Bool {
        let parts = envelope.split(separator: ".", omittingEmptySubsequences: false)
        return parts.count != 3 || parts[1] != keys.currentID
    }

    private static func associatedData(_ keyID: String, _ context: String) -> Data {
        Data("\(version).\(keyID).\(context)".utf8)
    }
}
