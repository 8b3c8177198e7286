import Crypto
import Foundation
import Hex

/// The fields of a record that its chained hash covers, and the hash itself.
///
/// Personal data never enters the hash directly: the subject is a random pseudonym, and the IP
/// and user agent enter as HMACs keyed by the subject's secret. Erasing a subject destroys the
/// secret and the pseudonym's link to the user, while every hash can still be recomputed from
/// what stays in the row: that is what lets erasure keep the chain valid.
struct ChainedFields: Sendable, Equatable {
    var chain: Int
    var position: Int64
    var recordID: UUID
    var subject: UUID
    var documentType: String
    var version: String
    var digest: String
    var action: String
    /// Milliseconds since 1970: the precision receipts carry, so a receipt's time recomputes.
    var recordedMilliseconds: Int64
    var ipHMAC: [UInt8]?
    var userAgentHMAC: [UInt8]?

    /// SHA-256 over a length-prefixed encoding of every field and `previous`: no two different
    /// records encode alike, whatever their strings contain.
    ///
    /// The encoding is built in one buffer and hashed at once: a hasher update and an array per
    /// field were a few dozen allocations per record on Audit's write path.
    func hash(previous: [UInt8]) -> [UInt8] {
        var encoded: [UInt8] = []
        encoded.reserveCapacity(384)
        func length(_ count: Int) {
            let value = UInt32(count)
            for shift in [24, 16, 8, 0] as [UInt32] { encoded.append(UInt8(truncatingIfNeeded: value >> shift)) }
        }
        func field(_ bytes: some Collection<UInt8>) {
            length(bytes.count)
            encoded.append(contentsOf: bytes)
        }
        func integer(_ value: Int64) {
            length(8)
            for shift in stride(from: 56, through: 0, by: -8) { encoded.append(UInt8(truncatingIfNeeded: value >> Int64(shift))) }
        }
        func uuid(_ id: UUID) {
            length(36)
            Hex.appendUUID(id, to: &encoded)
        }
        field("recruiting-compass-audit-v1".utf8)
        integer(Int64(chain))
        integer(position)
        uuid(recordID)
        uuid(subject)
        field(documentType.utf8)
        field(version.utf8)
        field(digest.utf8)
        field(action.utf8)
        integer(recordedMilliseconds)
        field(ipHMAC ?? [])
        field(userAgentHMAC ?? [])
        field(previous)
        return Array(SHA256.hash(data: encoded))
    }

    /// The hash every chain starts from.
    static let genesis = [UInt8](repeating: 0, count: 32)
}

/// HMAC-SHA256 of a personal value under a subject's secret: comparable while the secret exists,
/// meaningless once it is destroyed.
func personalHMAC(_ value: String?, secret: [UInt8]) -> [UInt8]? {
    personalHMAC(value, keyed: HMAC(key: SymmetricKey(data: secret)))
}

/// The same with the subject's HMAC keyed already (``Subject/keyed``): what a batch's records use.
func personalHMAC(_ value: String?, keyed: HMAC<SHA256>) -> [UInt8]? {
    guard let value else { return nil }
    var hmac = keyed
    hmac.update(data: Array(value.utf8))
    return Array(hmac.finalize())
}
