import Contracts
import Crypto
import Foundation
import Hex
import Testing

@testable import AuditService

/// The chained hash and the receipt signature, without a database.
struct RecordHashTests {
    let fields = ChainedFields(
        chain: 1, position: 7, recordID: UUID(), subject: UUID(), documentType: "terms_of_service", version: "1.0",
        digest: String(repeating: "ab", count: 32), action: "accept", recordedMilliseconds: 1_760_000_000_123,
        ipHMAC: [1, 2, 3], userAgentHMAC: [4, 5])

    /// Every stored chain is recomputed with this function: its bytes must never change. The
    /// expected value was computed independently (Python's hashlib over the documented encoding:
    /// each field as a 4-byte big-endian length and its bytes, integers as 8 big-endian bytes).
    @Test func hashIsPinnedToItsEncoding() throws {
        let pinned = ChainedFields(
            chain: 3, position: 42, recordID: try #require(UUID(uuidString: "0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b")),
            subject: try #require(UUID(uuidString: "6ba7b810-9dad-11d1-80b4-00c04fd430c8")), documentType: "terms_of_service",
            version: "2025-12-12", digest: String(repeating: "d", count: 64), action: "accept",
            recordedMilliseconds: 1_760_000_000_500, ipHMAC: Array(0..<32), userAgentHMAC: nil)
        #expect(
            Hex.string(pinned.hash(previous: [UInt8](repeating: 7, count: 32)))
                == "8d8e0db446b43bec7a313008c7a12c53600e072dbedf28a0e267129ad4a39b75")
    }

    /// A change to any one field, or to the previous hash, changes the hash (that the same fields
    /// always give the same bytes is `hashIsPinnedToItsEncoding`'s).
    @Test func hashCoversEveryField() {
        let previous = [UInt8](repeating: 9, count: 32)
        let hash = fields.hash(previous: previous)
        #expect(hash.count == 32)
        var variants: [ChainedFields] = []
        for change in 0..<11 {
            var copy = fields
            switch change {
            case 0: copy.chain = 2
            case 1: copy.position = 8
            case 2: copy.recordID = UUID()
            case 3: copy.subject = UUID()
            case 4: copy.documentType = "privacy_policy"
            case 5: copy.version = "1.1"
            case 6: copy.digest = String(repeating: "cd", count: 32)
            case 7: copy.action = "decline"
            case 8: copy.recordedMilliseconds += 1
            case 9: copy.ipHMAC = nil
            default: copy.userAgentHMAC = [4]
            }
            variants.append(copy)
        }
        for variant in variants { #expect(variant.hash(previous: previous) != hash) }
        #expect(fields.hash(previous: ChainedFields.genesis) != hash)
    }

    @Test func fieldBoundariesAreUnambiguous() {
        // "1.0" + "x" and "1.0x" + "" must not hash alike.
        var a = fields
        a.version = "1.0"
        a.digest = "x"
        var b = fields
        b.version = "1.0x"
        b.digest = ""
        #expect(a.hash(previous: ChainedFields.genesis) != b.hash(previous: ChainedFields.genesis))
    }

    @Test func personalHMACDependsOnTheSecret() {
        let one = personalHMAC("203.0.113.7", secret: [UInt8](repeating: 1, count: 32))
        let two = personalHMAC("203.0.113.7", secret: [UInt8](repeating: 2, count: 32))
        #expect(one != nil && one != two)
        #expect(personalHMAC(nil, secret: [UInt8](repeating: 1, count: 32)) == nil)
    }

    /// A subject's HMAC, keyed once and copied per value, is HMAC-SHA256: RFC 4231's test case 2,
    /// and a keyed copy used for one value does not change the next value's.
    @Test func aSubjectsKeyedHMACIsHMACSHA256() {
        let subject = Subject(pseudonym: UUID(), secret: Array("Jefe".utf8))
        let expected = "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"
        #expect(personalHMAC("what do ya want for nothing?", keyed: subject.keyed).map(Hex.string) == expected)
        #expect(personalHMAC("what do ya want for nothing?", secret: subject.secret).map(Hex.string) == expected)
        _ = personalHMAC("203.0.113.7", keyed: subject.keyed)
        #expect(personalHMAC("what do ya want for nothing?", keyed: subject.keyed).map(Hex.string) == expected)
        #expect(personalHMAC(nil, keyed: subject.keyed) == nil)
    }

    @Test func receiptSignatureVerifiesAndDetectsEdits() {
        let signer = ReceiptSigner(privateKey: Curve25519.Signing.PrivateKey())
        let receipt = signer.signed(
            ConsentReceipt(
                recordId: UUID(), documentType: .termsOfService, version: "1.0", digest: "d", action: .accept,
                recordedAt: Date(timeIntervalSince1970: 1_760_000_000.5), chain: 0, position: 1, hash: "h", signature: ""))
        #expect(signer.isValid(signature: receipt.signature, for: receipt.signedText))
        var edited = receipt
        edited.version = "2.0"
        #expect(!signer.isValid(signature: edited.signature, for: edited.signedText))
        let other = ReceiptSigner(privateKey: Curve25519.Signing.PrivateKey())
        #expect(!other.isValid(signature: receipt.signature, for: receipt.signedText))
        // A rotated-out key still verifies when listed as previous.
        let rotated = ReceiptSigner(privateKey: Curve25519.Signing.PrivateKey(), previousPublicKeys: [signer.key.publicKey])
        #expect(rotated.isValid(signature: receipt.signature, for: receipt.signedText))
    }

    @Test func timeOrderedIDsSortByTime() {
        let earlier = UUID.timeOrdered(milliseconds: 1_000)
        let later = UUID.timeOrdered(milliseconds: 2_000)
        #expect(earlier.uuidString < later.uuidString)
        #expect(earlier.uuidString.dropFirst(14).first == "7")
    }
}
