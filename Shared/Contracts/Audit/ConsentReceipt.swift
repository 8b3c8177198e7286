import BusCore
import Foundation
import Hex

/// The proof a user keeps that a record was written: what was agreed to, when, and where the
/// record sits in its hash chain. `audit.verify_receipt` checks one against the store.
///
/// `hash` is the record's chained hash (hex SHA-256 over its fields and the previous hash).
/// `signature` is the service's Ed25519 signature (base64), checkable offline with the service's
/// public key (`audit.public_key`), in one of two forms:
/// - without ``proof``, over ``signedText`` itself (every receipt read back through
///   `audit.history` and `audit.select`, and every receipt issued before batch signing);
/// - with ``proof``, over ``ReceiptProof/signedRootText(rootHex:size:)``: the receipts written in
///   one group commit are the leaves of an RFC 6962 Merkle tree and share one signature of its
///   root, and ``proof`` is this receipt's inclusion path. One signature per batch instead of one
///   per receipt.
public struct ConsentReceipt: Codable, Sendable, Equatable {
    public var recordId: UUID
    public var documentType: LegalDocumentType
    public var version: String
    /// The document's content digest the user agreed to.
    public var digest: String
    public var action: AcceptanceAction
    public var recordedAt: Date
    public var chain: Int
    public var position: Int64
    public var hash: String
    public var signature: String
    /// Where the receipt sits in the Merkle tree whose root ``signature`` signs; nil when the
    /// signature is over ``signedText`` itself.
    public var proof: ReceiptProof?

    public init(
        recordId: UUID, documentType: LegalDocumentType, version: String, digest: String,
        action: AcceptanceAction, recordedAt: Date, chain: Int, position: Int64, hash: String,
        signature: String, proof: ReceiptProof? = nil
    ) {
        self.recordId = recordId
        self.documentType = documentType
        self.version = version
        self.digest = digest
        self.action = action
        self.recordedAt = recordedAt
        self.chain = chain
        self.position = position
        self.hash = hash
        self.signature = signature
        self.proof = proof
    }

    /// The exact text the signature covers (without a proof), or whose hash is the receipt's leaf
    /// in the batch's tree (with one): every field but the signature and the proof, one per line.
    public var signedText: String {
        var text: [UInt8] = []
        appendSignedText(to: &text)
        return String(decoding: text, as: UTF8.self)
    }

    /// Appends the UTF-8 of ``signedText`` to `out`, without the strings in between (a batch's
    /// leaves are hashed from it).
    public func appendSignedText(to out: inout [UInt8]) {
        out.reserveCapacity(out.count + 256)
        out.append(contentsOf: "recruiting-compass-receipt-v1\n".utf8)
        Hex.appendUUID(recordId, to: &out)
        for line in [documentType.rawValue, version, digest, action.rawValue] {
            out.append(UInt8(ascii: "\n"))
            out.append(contentsOf: line.utf8)
        }
        out.append(UInt8(ascii: "\n"))
        Timestamp.append(recordedAt, to: &out)
        for line in [String(chain), String(position), hash] {
            out.append(UInt8(ascii: "\n"))
            out.append(contentsOf: line.utf8)
        }
    }
}

/// A receipt's place in its batch's Merkle tree (RFC 6962, section 2.1): the leaf is
/// SHA-256(0x00 ‖ UTF-8 of ``ConsentReceipt/signedText``), a node SHA-256(0x01 ‖ left ‖ right),
/// and `path` lists the sibling hashes from the leaf up, in lower-case hex. A verifier rebuilds
/// the root from the leaf, `index`, `size` and `path` (RFC 9162, section 2.1.3.2) and checks the
/// receipt's signature over ``signedRootText(rootHex:size:)``.
public struct ReceiptProof: Codable, Sendable, Equatable {
    /// The leaf's index in the tree, from 0.
    public var index: Int
    /// The number of leaves (receipts) in the tree.
    public var size: Int
    public var path: [String]

    public init(index: Int, size: Int, path: [String]) {
        self.index = index
        self.size = size
        self.path = path
    }

    /// The exact text a batch signature covers.
    public static func signedRootText(rootHex: String, size: Int) -> String {
        "recruiting-compass-receipt-batch-v1\n" + rootHex + "\n" + String(size)
    }
}
