import Crypto
import Foundation
import Identity
import Testing

/// AES-GCM envelopes for Apple's refresh token at rest.
@Suite struct SecretBoxTests {
    let plaintext = Data("r.apple-refresh-token.0042".utf8)
    let keyOne = SymmetricKey(size: .bits256)
    let keyTwo = SymmetricKey(size: .bits256)

    @Test func roundTrip() throws {
        let box = SecretBox(keys: try EncryptionKeyRing(currentID: "k1", current: keyOne))
        let sealed = try box.seal(plaintext, context: "user-42")
        #expect(sealed.hasPrefix("v1.k1."))
        #expect(!sealed.contains("apple-refresh-token"))
        #expect(try box.open(sealed, context: "user-42") == plaintext)
        #expect(try box.seal(plaintext, context: "user-42") != sealed)  // fresh nonce each time
    }

    @Test func wrongKeyOrContextFails() throws {
        let sealed = try SecretBox(keys: try EncryptionKeyRing(currentID: "k1", current: keyOne)).seal(plaintext, context: "user-42")
        let sameIDOtherKey = SecretBox(keys: try EncryptionKeyRing(currentID: "k1", current: keyTwo))
        #expect(try thrown { try sameIDOtherKey.open(sealed, context: "user-42") } == .decryptionFailed)
        let box = SecretBox(keys: try EncryptionKeyRing(currentID: "k1", current: keyOne))
        #expect(try thrown { try box.open(sealed, context: "user-43") } == .decryptionFailed)
    }

    @Test func tamperingFails() throws {
        let box = SecretBox(keys: try EncryptionKeyRing(currentID: "k1", current: keyOne, previous: ["k0": keyOne]))
        let sealed = try box.seal(plaintext)
        var bytes = try #require(Base64URL.decode(sealed.split(separator: ".")[2]))
        bytes[bytes.count / 2] ^= 0x01
        #expect(try thrown { try box.open("v1.k1.\(Base64URL.encode(bytes))") } == .decryptionFailed)
        // The key id is authenticated too: relabelling the envelope fails even with the same key.
        #expect(try thrown { try box.open(sealed.replacingOccurrences(of: "v1.k1.", with: "v1.k0.")) } == .decryptionFailed)
        for garbage in ["", "v1.k1", "v2.k1.AAAA", "v1.k1.!!!", "v1.k1.AAAA"] {
            #expect(try thrown { try box.open(garbage) } == .decryptionFailed)
        }
    }

    @Test func rotationOpensOldEnvelopesAndSealsWithTheNewKey() throws {
        let old = SecretBox(keys: try EncryptionKeyRing(currentID: "k1", current: keyOne))
        let sealedOld = try old.seal(plaintext, context: "u")
        let rotated = SecretBox(keys: try EncryptionKeyRing(currentID: "k2", current: keyTwo, previous: ["k1": keyOne]))
        #expect(try rotated.open(sealedOld, context: "u") == plaintext)
        #expect(rotated.needsResealing(sealedOld))
        let resealed = try rotated.seal(try rotated.open(sealedOld, context: "u"), context: "u")
        #expect(!rotated.needsResealing(resealed) && resealed.hasPrefix("v1.k2."))
        let retired = SecretBox(keys: try EncryptionKeyRing(currentID: "k2", current: keyTwo))
        #expect(try thrown { try retired.open(sealedOld, context: "u") } == .decryptionFailed)
        #expect(try retired.open(resealed, context: "u") == plaintext)
    }

    @Test func keyRingFromConfiguration() throws {
        let raw = { (key: SymmetricKey) in key.withUnsafeBytes { Data($0).base64EncodedString() } }
        let ring = try EncryptionKeyRing(configuration: "k2=\(raw(keyTwo)), k1=\(raw(keyOne))")
        #expect(ring.currentID == "k2")
        let sealed = try SecretBox(keys: try EncryptionKeyRing(currentID: "k1", current: keyOne)).seal(plaintext)
        #expect(try SecretBox(keys: ring).open(sealed) == plaintext)
        #expect(try thrown { try EncryptionKeyRing(configuration: "k1=AAAA") } == .invalidKey("encryption keys must be 256 bits"))
        #expect(try thrown { try EncryptionKeyRing(configuration: "") } != nil)
        #expect(!"\(ring)".contains(raw(keyOne)))
    }
}
